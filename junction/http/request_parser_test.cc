// request_parser_test.cc — RequestParser conformance on crafted and mutated byte streams.
//
// Pipelining at every split, chunked bodies, limits (431, 413), malformed input (400, 501,
// 505), 100-continue, HEAD and keep-alive rules, and a differential test over random cuts.
#include "junction/http/request_parser.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace junction::http {
namespace {

// A request copied out of the parser, so it can outlive the parser's next call.
struct Owned {
  std::string method;
  std::string target, path, query;
  int minor = 0;
  std::vector<std::pair<std::string, std::string>> headers, trailers;
  std::string body;
  bool keep_alive = false, expect_continue = false, chunked = false, head = false;

  bool operator==(const Owned&) const = default;
};

Owned Copy(const Request& r) {
  Owned o;
  o.method = std::string(r.method_name);
  o.target = std::string(r.target);
  o.path = std::string(r.path);
  o.query = std::string(r.query);
  o.minor = r.version_minor;
  for (const Header& h : r.headers) o.headers.emplace_back(h.name, h.value);
  for (const Header& h : r.trailers) o.trailers.emplace_back(h.name, h.value);
  o.body = std::string(r.body);
  o.keep_alive = r.keep_alive;
  o.expect_continue = r.expect_continue;
  o.chunked = r.chunked;
  o.head = r.is_head();
  return o;
}

struct Outcome {
  std::vector<Owned> requests;
  int error_status = 0;  // 0: no error
  std::string error_message;

  bool operator==(const Outcome&) const = default;
};

// Drains every complete request, then records an error if one ended the stream.
void Drain(RequestParser& parser, Outcome& out) {
  if (out.error_status != 0) return;
  for (;;) {
    Status<const Request*> r = parser.Next();
    if (!r) {
      out.error_status = parser.error_status();
      out.error_message = r.error().message();
      return;
    }
    if (*r == nullptr) return;
    out.requests.push_back(Copy(**r));
  }
}

// Feeds `input` in pieces cut at `cuts` (offsets), draining after each piece.
Outcome ParseWithCuts(std::string_view input, const std::vector<std::size_t>& cuts,
                      const ParserOptions& options = {}) {
  RequestParser parser(options);
  Outcome out;
  std::size_t prev = 0;
  for (std::size_t cut : cuts) {
    parser.Feed(input.substr(prev, cut - prev));
    Drain(parser, out);
    prev = cut;
  }
  parser.Feed(input.substr(prev));
  Drain(parser, out);
  return out;
}

Outcome ParseAll(std::string_view input, const ParserOptions& options = {}) {
  return ParseWithCuts(input, {}, options);
}

Outcome ParseByteByByte(std::string_view input, const ParserOptions& options = {}) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < input.size(); ++i) cuts.push_back(i);
  return ParseWithCuts(input, cuts, options);
}

constexpr std::string_view kPipelined =
    "GET /function/echo?x=1 HTTP/1.1\r\n"
    "Host: node\r\n"
    "User-Agent: curl/7.88.1\r\n"
    "\r\n"
    "POST /function/sha256 HTTP/1.1\r\n"
    "Host: node\r\n"
    "Content-Length: 11\r\n"
    "Content-Type: text/plain\r\n"
    "\r\n"
    "hello world"
    "PUT /function/cat HTTP/1.1\r\n"
    "Host: node\r\n"
    "Transfer-Encoding: chunked\r\n"
    "Connection: close\r\n"
    "\r\n"
    "5\r\nchunk\r\n"
    "3;name=value\r\ned!\r\n"
    "0\r\n"
    "X-Checksum: abc\r\n"
    "\r\n";

void ExpectPipelined(const Outcome& out) {
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 3u);
  const Owned& get = out.requests[0];
  EXPECT_EQ(get.method, "GET");
  EXPECT_EQ(get.target, "/function/echo?x=1");
  EXPECT_EQ(get.path, "/function/echo");
  EXPECT_EQ(get.query, "x=1");
  EXPECT_EQ(get.minor, 1);
  ASSERT_EQ(get.headers.size(), 2u);
  EXPECT_EQ(get.headers[1], std::make_pair(std::string("User-Agent"), std::string("curl/7.88.1")));
  EXPECT_EQ(get.body, "");
  EXPECT_TRUE(get.keep_alive);
  const Owned& post = out.requests[1];
  EXPECT_EQ(post.method, "POST");
  EXPECT_EQ(post.path, "/function/sha256");
  EXPECT_EQ(post.body, "hello world");
  EXPECT_FALSE(post.chunked);
  EXPECT_TRUE(post.keep_alive);
  const Owned& put = out.requests[2];
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.body, "chunked!");
  EXPECT_TRUE(put.chunked);
  ASSERT_EQ(put.trailers.size(), 1u);
  EXPECT_EQ(put.trailers[0], std::make_pair(std::string("X-Checksum"), std::string("abc")));
  EXPECT_FALSE(put.keep_alive);
}

TEST(RequestParserTest, SimpleGet) {
  Outcome out = ParseAll("GET /healthz HTTP/1.1\r\nHost: a\r\nAccept:   */*  \r\n\r\n");
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].method, "GET");
  EXPECT_EQ(out.requests[0].path, "/healthz");
  EXPECT_EQ(out.requests[0].query, "");
  // Whitespace around a value is not part of it.
  EXPECT_EQ(out.requests[0].headers[1].second, "*/*");
  EXPECT_TRUE(out.requests[0].keep_alive);
  EXPECT_FALSE(out.requests[0].head);
}

TEST(RequestParserTest, HeaderLookupIsCaseInsensitiveAndEmptyValuesWork) {
  RequestParser parser;
  parser.Feed("GET / HTTP/1.1\r\nHOST: a\r\nX-Empty:\r\nx-other: v\r\n\r\n");
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->headers.Find("host"), "a");
  EXPECT_EQ((*r)->headers.Find("x-empty"), "");
  EXPECT_EQ((*r)->headers.Find("X-OTHER"), "v");
  EXPECT_EQ((*r)->method, Method::kGet);
}

TEST(RequestParserTest, ThreePipelinedRequestsInOneBufferComeOutInOrder) {
  ExpectPipelined(ParseAll(kPipelined));
}

TEST(RequestParserTest, PipelinedRequestsSplitAtEveryOffset) {
  for (std::size_t i = 0; i <= kPipelined.size(); ++i) {
    SCOPED_TRACE("split at " + std::to_string(i));
    ExpectPipelined(ParseWithCuts(kPipelined, {i}));
  }
}

TEST(RequestParserTest, PipelinedRequestsSplitAtEveryPairOfOffsets) {
  for (std::size_t i = 0; i <= kPipelined.size(); i += 3) {
    for (std::size_t j = i; j <= kPipelined.size(); j += 2) {
      Outcome out = ParseWithCuts(kPipelined, {i, j});
      ASSERT_EQ(out.requests.size(), 3u) << "cuts " << i << "," << j;
      ASSERT_EQ(out.requests[2].body, "chunked!") << "cuts " << i << "," << j;
    }
  }
}

TEST(RequestParserTest, PipelinedRequestsOneByteAtATime) {
  ExpectPipelined(ParseByteByByte(kPipelined));
}

TEST(RequestParserTest, NextReturnsOneRequestPerCallAndViewsStayValidUntilTheNextCall) {
  RequestParser parser;
  parser.Feed(kPipelined);
  auto first = parser.Next();
  ASSERT_TRUE(first.has_value());
  ASSERT_NE(*first, nullptr);
  std::string_view path = (*first)->path;
  EXPECT_EQ(path, "/function/echo");  // still valid: no call since Next()
  auto second = parser.Next();
  ASSERT_TRUE(second.has_value());
  ASSERT_NE(*second, nullptr);
  EXPECT_EQ((*second)->body, "hello world");
  auto third = parser.Next();
  ASSERT_TRUE(third.has_value());
  ASSERT_NE(*third, nullptr);
  EXPECT_EQ((*third)->body, "chunked!");
  auto none = parser.Next();
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(*none, nullptr);
}

TEST(RequestParserTest, ChunkedBodyWithExtensionsAndTrailers) {
  constexpr std::string_view kInput =
      "POST /function/echo HTTP/1.1\r\n"
      "Host: node\r\n"
      "Transfer-Encoding: chunked\r\n"
      "\r\n"
      "4;ext=1\r\nWiki\r\n"
      "5;a;b=\"quoted\"\r\npedia\r\n"
      "E\r\n in\r\n\r\nchunks.\r\n"
      "0;last=yes\r\n"
      "Expires: never\r\n"
      "X-Sum: 42\r\n"
      "\r\n";
  for (const Outcome& out : {ParseAll(kInput), ParseByteByByte(kInput)}) {
    ASSERT_EQ(out.error_status, 0) << out.error_message;
    ASSERT_EQ(out.requests.size(), 1u);
    EXPECT_EQ(out.requests[0].body, "Wikipedia in\r\n\r\nchunks.");
    EXPECT_TRUE(out.requests[0].chunked);
    ASSERT_EQ(out.requests[0].trailers.size(), 2u);
    EXPECT_EQ(out.requests[0].trailers[0].first, "Expires");
    EXPECT_EQ(out.requests[0].trailers[1].second, "42");
  }
}

TEST(RequestParserTest, ManySmallChunksKeepTheBufferBounded) {
  std::string input = "POST /f HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string expected;
  for (int i = 0; i < 20000; ++i) {
    char c = char('a' + i % 26);
    input += "1;some-extension=padding\r\n";
    input.push_back(c);
    input += "\r\n";
    expected.push_back(c);
  }
  input += "0\r\n\r\n";
  RequestParser parser;
  Outcome out;
  std::size_t max_buffered = 0;
  for (std::size_t off = 0; off < input.size(); off += 512) {
    parser.Feed(std::string_view(input).substr(off, 512));
    max_buffered = std::max(max_buffered, parser.buffered_bytes());
    Drain(parser, out);
  }
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].body, expected);
  // Framing is 28 bytes per body byte; without reclaiming it the buffer would hold ~580 KB.
  EXPECT_LT(max_buffered, expected.size() + 4096);
}

TEST(RequestParserTest, HugeChunkExtensionDoesNotPinMemory) {
  RequestParser parser;
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=");
  Outcome out;
  std::size_t max_buffered = 0;
  for (int i = 0; i < 256; ++i) {
    parser.Feed(std::string(4096, 'e'));
    Drain(parser, out);
    max_buffered = std::max(max_buffered, parser.buffered_bytes());
  }
  parser.Feed("\r\nabc\r\n0\r\n\r\n");
  Drain(parser, out);
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].body, "abc");
  EXPECT_EQ(out.requests[0].headers.size(), 2u);
  EXPECT_LT(max_buffered, 3 * 4096u);  // not the 1 MiB that was sent
}

TEST(RequestParserTest, EndlessTrailerIs431) {
  ParserOptions options;
  options.max_header_bytes = 1024;
  RequestParser parser(options);
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T");
  Outcome out;
  for (int i = 0; i < 100 && out.error_status == 0; ++i) {
    parser.Feed(std::string(100, 't'));
    Drain(parser, out);
  }
  EXPECT_EQ(out.error_status, 431);
}

TEST(RequestParserTest, ZeroCopyReadPathHandsOutTheBodyWhereItWasRead) {
  RequestParser parser;
  constexpr std::string_view kInput =
      "POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n\r\nabcde";
  std::span<char> space = parser.WritableSpace(kInput.size());
  ASSERT_GE(space.size(), kInput.size());
  std::copy(kInput.begin(), kInput.end(), space.begin());  // stands in for a socket read
  parser.Commit(kInput.size());
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value());
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->body, "abcde");
  EXPECT_EQ((*r)->body.data(), space.data() + kInput.size() - 5);  // no copy was made
}

TEST(RequestParserTest, ALargeBodyIsReadIntoOneRegionThatNeverMoves) {
  RequestParser parser;
  constexpr std::size_t kBody = 300000;
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 300000\r\n\r\nab");
  ASSERT_EQ(*parser.Next(), nullptr);
  std::span<char> space = parser.WritableSpace(16);
  ASSERT_GE(space.size(), kBody - 2);  // room for the whole rest of the body
  char* body_start = space.data() - 2;
  std::size_t written = 0;
  while (written < kBody - 2) {  // many small reads, as from a socket
    std::span<char> s = parser.WritableSpace(1);
    ASSERT_EQ(s.data(), space.data() + written);  // the buffer neither grew nor moved
    std::size_t n = std::min<std::size_t>(1460, kBody - 2 - written);
    std::fill_n(s.data(), n, 'c');
    parser.Commit(n);
    written += n;
    auto r = parser.Next();
    ASSERT_TRUE(r.has_value());
    if (written < kBody - 2) {
      ASSERT_EQ(*r, nullptr);
    }
    if (*r != nullptr) {
      EXPECT_EQ((*r)->body.size(), kBody);
      EXPECT_EQ((*r)->body.data(), body_start);
      EXPECT_EQ((*r)->body.substr(0, 3), "abc");
    }
  }
}

TEST(RequestParserTest, ContentLengthBodyInOneFeedIsNotCopiedAgain) {
  RequestParser parser;
  std::string input = "POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 1000\r\n\r\n";
  input += std::string(1000, 'x');
  parser.Feed(input);
  std::size_t buffered = parser.buffered_bytes();
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value());
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->body.size(), 1000u);
  EXPECT_EQ(buffered, input.size());
}

// ---- limits --------------------------------------------------------------------------------

TEST(RequestParserTest, HeadExactlyAtTheByteLimitPassesOneMoreByteIs431) {
  const std::string head = "GET / HTTP/1.1\r\nHost: node\r\nX-Pad: 0123456789\r\n\r\n";
  ParserOptions options;
  options.max_header_bytes = head.size();
  Outcome ok = ParseAll(head, options);
  EXPECT_EQ(ok.error_status, 0) << ok.error_message;
  EXPECT_EQ(ok.requests.size(), 1u);
  Outcome ok_bytewise = ParseByteByByte(head, options);
  EXPECT_EQ(ok_bytewise.requests.size(), 1u);

  options.max_header_bytes = head.size() - 1;
  Outcome too_big = ParseAll(head, options);
  EXPECT_EQ(too_big.error_status, 431);
  EXPECT_TRUE(too_big.requests.empty());
  EXPECT_NE(too_big.error_message.find("max_header_bytes"), std::string::npos);
  EXPECT_EQ(ParseByteByByte(head, options).error_status, 431);
}

TEST(RequestParserTest, HeaderByteLimitAppliesPerRequestWhenPipelined) {
  const std::string head = "GET / HTTP/1.1\r\nHost: node\r\n\r\n";
  ParserOptions options;
  options.max_header_bytes = head.size();
  Outcome out = ParseAll(head + head + head, options);
  EXPECT_EQ(out.error_status, 0) << out.error_message;
  EXPECT_EQ(out.requests.size(), 3u);
}

TEST(RequestParserTest, EndlessHeaderIsRefusedWithoutWaitingForItsEnd) {
  ParserOptions options;
  options.max_header_bytes = 1024;
  RequestParser parser(options);
  parser.Feed("GET / HTTP/1.1\r\nHost: a\r\nX-Long: ");
  Outcome out;
  for (int i = 0; i < 100 && out.error_status == 0; ++i) {
    parser.Feed(std::string(100, 'a'));
    Drain(parser, out);
  }
  EXPECT_EQ(out.error_status, 431);
  EXPECT_LT(parser.buffered_bytes(), 1200u);
}

TEST(RequestParserTest, HeaderCountOverTheLimitIs431) {
  ParserOptions options;
  options.max_header_count = 10;
  auto request_with = [](int n) {
    std::string s = "GET / HTTP/1.1\r\nHost: node\r\n";
    for (int i = 1; i < n; ++i) s += "X-H" + std::to_string(i) + ": v\r\n";
    return s + "\r\n";
  };
  EXPECT_EQ(ParseAll(request_with(10), options).requests.size(), 1u);
  Outcome out = ParseAll(request_with(11), options);
  EXPECT_EQ(out.error_status, 431);
  EXPECT_NE(out.error_message.find("max_header_count"), std::string::npos);
}

TEST(RequestParserTest, ContentLengthOverTheLimitIs413BeforeTheBodyArrives) {
  ParserOptions options;
  options.max_body_bytes = 100;
  RequestParser parser(options);
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 101\r\n\r\n");
  auto r = parser.Next();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(parser.error_status(), 413);
  EXPECT_EQ(r.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(r.error().message().find("max_body_bytes"), std::string::npos);

  std::string at_limit = "POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 100\r\n\r\n";
  at_limit += std::string(100, 'b');
  EXPECT_EQ(ParseAll(at_limit, options).requests.size(), 1u);
}

TEST(RequestParserTest, ChunkedBodyOverTheLimitIs413) {
  ParserOptions options;
  options.max_body_bytes = 10;
  std::string ok =
      "POST /f HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n";
  EXPECT_EQ(ParseAll(ok, options).requests.size(), 1u);
  std::string over =
      "POST /f HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\n01234\r\n6\r\n56789a\r\n0\r\n\r\n";
  EXPECT_EQ(ParseAll(over, options).error_status, 413);
  EXPECT_EQ(ParseByteByByte(over, options).error_status, 413);
}

// ---- malformed input -----------------------------------------------------------------------

struct MalformedCase {
  const char* name;
  std::string_view input;
  int status;
};

void PrintTo(const MalformedCase& c, std::ostream* os) {
  *os << c.name;
}

class MalformedRequestTest : public testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedRequestTest, IsRefusedWithItsStatusWholeAndBytewise) {
  const MalformedCase& c = GetParam();
  for (const Outcome& out : {ParseAll(c.input), ParseByteByByte(c.input)}) {
    EXPECT_TRUE(out.requests.empty()) << c.name;
    EXPECT_EQ(out.error_status, c.status) << c.name << ": " << out.error_message;
    EXPECT_FALSE(out.error_message.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Conformance, MalformedRequestTest,
    testing::Values(
        MalformedCase{"bad_method", "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        MalformedCase{"unknown_method", "FETCH / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        MalformedCase{"lowercase_method", "get / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        MalformedCase{"bad_version_letters", "GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400},
        MalformedCase{"bad_protocol_name", "GET / HTTX/1.1\r\nHost: a\r\n\r\n", 400},
        MalformedCase{"http2_version", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
        MalformedCase{"missing_version_is_http09", "GET /\r\nHost: a\r\n\r\n", 505},
        MalformedCase{"space_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n",
                      400},
        // Every kind of non-token byte in a name (RFC 9110 5.6.2 tchar), not just a space.
        MalformedCase{"paren_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad(Name: x\r\n\r\n", 400},
        MalformedCase{"quote_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad\"Name: x\r\n\r\n", 400},
        MalformedCase{"at_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad@Name: x\r\n\r\n", 400},
        MalformedCase{"brace_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad{Name: x\r\n\r\n", 400},
        MalformedCase{"tab_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad\tName: x\r\n\r\n", 400},
        MalformedCase{"control_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad\x01Name: x\r\n\r\n", 400},
        MalformedCase{"del_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad\x7fName: x\r\n\r\n", 400},
        MalformedCase{"high_byte_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nBad\xc3\xa9Name: x\r\n\r\n", 400},
        MalformedCase{"empty_header_name", "GET / HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", 400},
        MalformedCase{"cr_inside_header_value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n", 400},
        MalformedCase{"lf_inside_header_value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\nc\r\n\r\n", 400},
        MalformedCase{"tab_folded_header_value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\tc\r\n\r\n", 400},
        MalformedCase{"header_without_colon", "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400},
        MalformedCase{
            "bad_chunk_size",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n", 400},
        MalformedCase{"chunk_data_longer_than_size",
                      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "2\r\nabc\r\n0\r\n\r\n",
                      400},
        MalformedCase{"content_length_and_chunked",
                      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                      400},
        MalformedCase{"chunked_and_content_length",
                      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
                      "Content-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                      400},
        MalformedCase{"duplicate_differing_content_length",
                      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"
                      "abcd",
                      400},
        MalformedCase{"negative_content_length",
                      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
        MalformedCase{"non_numeric_content_length",
                      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400},
        MalformedCase{"chunked_not_last_coding",
                      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
                      400},
        MalformedCase{"transfer_encoding_in_http10",
                      "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                      400},
        MalformedCase{"missing_host_in_http11", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400},
        MalformedCase{"two_hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
        MalformedCase{"obsolete_line_folding",
                      "GET / HTTP/1.1\r\nHost: a\r\nX-Folded: a\r\n b\r\n\r\n", 400},
        MalformedCase{"gzip_transfer_coding",
                      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                      "0\r\n\r\n",
                      501},
        MalformedCase{"gzip_coding_in_second_field",
                      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                      501},
        MalformedCase{
            "identical_duplicate_content_length",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400},
        MalformedCase{"plus_sign_content_length",
                      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\nx", 400},
        MalformedCase{"control_char_in_value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n",
                      400},
        MalformedCase{"space_before_first_header", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400},
        MalformedCase{"connect_tunnel", "CONNECT node:443 HTTP/1.1\r\nHost: node:443\r\n\r\n", 501},
        MalformedCase{"nul_in_target",
                      std::string_view("GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n",
                                       sizeof("GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n") - 1),
                      400},
        MalformedCase{"bare_cr_in_request_line", "GET / HTTP/1.1\rHost: a\r\n\r\n", 400},
        MalformedCase{"space_before_colon", "GET / HTTP/1.1\r\nHost: a\r\nX-A : b\r\n\r\n", 400},
        MalformedCase{"slash_in_header_name", "GET / HTTP/1.1\r\nHost: a\r\nX/A: b\r\n\r\n", 400}),
    [](const testing::TestParamInfo<MalformedCase>& info) { return std::string(info.param.name); });

TEST(RequestParserTest, AfterAnErrorEveryCallFailsTheSameWay) {
  RequestParser parser;
  parser.Feed("GET / HTTP/9.9\r\nHost: a\r\n\r\n");
  auto first = parser.Next();
  ASSERT_FALSE(first.has_value());
  int status = parser.error_status();
  parser.Feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n");  // a valid request cannot revive it
  auto second = parser.Next();
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(parser.error_status(), status);
  EXPECT_EQ(second.error().message(), first.error().message());
  EXPECT_FALSE(parser.WantsContinue());
}

TEST(RequestParserTest, RequestsBeforeAMalformedOneAreStillDelivered) {
  Outcome out =
      ParseAll("GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nBAD\r\n\r\n");
  EXPECT_EQ(out.requests.size(), 2u);
  EXPECT_EQ(out.error_status, 400);
}

TEST(RequestParserTest, EofInTheMiddleOfARequestIsAnError) {
  RequestParser parser;
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 10\r\n\r\nabc");
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, nullptr);
  auto eof = parser.FinishAtEof();
  EXPECT_FALSE(eof.has_value());

  RequestParser clean;
  clean.Feed("GET / HTTP/1.1\r\nHost: n\r\n\r\n");
  ASSERT_NE(*clean.Next(), nullptr);
  auto clean_eof = clean.FinishAtEof();
  ASSERT_TRUE(clean_eof.has_value());
  EXPECT_EQ(*clean_eof, nullptr);
}

// ---- 100-continue, HEAD, keep-alive --------------------------------------------------------

TEST(RequestParserTest, ExpectContinueIsReportedOnceTheHeadIsComplete) {
  RequestParser parser;
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nExpect: 100-continue\r\nContent-Length: 5\r\n");
  EXPECT_EQ(*parser.Next(), nullptr);
  EXPECT_FALSE(parser.WantsContinue());  // the head is not complete yet
  parser.Feed("\r\n");
  EXPECT_EQ(*parser.Next(), nullptr);
  EXPECT_TRUE(parser.WantsContinue());
  parser.ContinueSent();
  EXPECT_FALSE(parser.WantsContinue());
  parser.Feed("ab");
  EXPECT_EQ(*parser.Next(), nullptr);
  EXPECT_FALSE(parser.WantsContinue());
  parser.Feed("cde");
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value());
  ASSERT_NE(*r, nullptr);
  EXPECT_TRUE((*r)->expect_continue);
  EXPECT_EQ((*r)->body, "abcde");
}

TEST(RequestParserTest, ExpectContinueWithOversizedBodyIs413NotContinue) {
  ParserOptions options;
  options.max_body_bytes = 4;
  RequestParser parser(options);
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  EXPECT_FALSE(parser.Next().has_value());
  EXPECT_EQ(parser.error_status(), 413);
  EXPECT_FALSE(parser.WantsContinue());
}

TEST(RequestParserTest, ExpectContinueIsIgnoredForHttp10AndWhenTheBodyIsThere) {
  Outcome http10 =
      ParseAll("POST /f HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_EQ(http10.requests.size(), 1u);
  EXPECT_FALSE(http10.requests[0].expect_continue);

  RequestParser parser;
  parser.Feed("POST /f HTTP/1.1\r\nHost: n\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx");
  auto r = parser.Next();
  ASSERT_NE(*r, nullptr);
  EXPECT_TRUE((*r)->expect_continue);
  EXPECT_FALSE(parser.WantsContinue());
}

TEST(RequestParserTest, ChunkedCodingIsAcceptedInAnyCaseAndLeadingEmptyLinesAreSkipped) {
  Outcome out = ParseAll(
      "\r\n\r\nPOST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "1\r\nx\r\n0\r\n\r\n");
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].body, "x");
}

TEST(RequestParserTest, HeadRequest) {
  Outcome out = ParseAll("HEAD /function/echo HTTP/1.1\r\nHost: n\r\n\r\n");
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_TRUE(out.requests[0].head);
  EXPECT_EQ(out.requests[0].method, "HEAD");
}

TEST(RequestParserTest, KeepAliveRulesForHttp10And11) {
  struct Case {
    std::string_view input;
    bool keep_alive;
  };
  const Case cases[] = {
      {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
      {"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", true},
      {"GET / HTTP/1.0\r\n\r\n", false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
      {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true},
      {"GET / HTTP/1.0\r\nConnection: close\r\n\r\n", false},
  };
  for (const Case& c : cases) {
    Outcome out = ParseAll(c.input);
    ASSERT_EQ(out.requests.size(), 1u) << c.input << out.error_message;
    EXPECT_EQ(out.requests[0].keep_alive, c.keep_alive) << c.input;
  }
}

TEST(RequestParserTest, NothingAfterARequestThatClosesTheConnectionIsParsed) {
  for (std::string_view closing :
       {"GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "GET /a HTTP/1.0\r\n\r\n"}) {
    std::string input(closing);
    input += "GET /b HTTP/1.1\r\nHost: a\r\n\r\n" + std::string(100000, 'x');
    Outcome whole = ParseAll(input);
    EXPECT_EQ(whole.error_status, 0) << whole.error_message;
    ASSERT_EQ(whole.requests.size(), 1u);
    EXPECT_EQ(whole.requests[0].path, "/a");
    EXPECT_FALSE(whole.requests[0].keep_alive);
    EXPECT_TRUE(ParseByteByByte(std::string_view(input).substr(0, 200)) ==
                ParseAll(std::string_view(input).substr(0, 200)));
  }
}

TEST(RequestParserTest, UpgradeRequestsAreParsedAsOrdinaryRequests) {
  Outcome out = ParseAll(
      "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
      "GET /next HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 2u);
  EXPECT_EQ(out.requests[1].path, "/next");
}

TEST(RequestParserTest, AbsoluteFormTargetAndOtherMethods) {
  Outcome out = ParseAll(
      "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"
      "DELETE http://node:8080/system/functions?x=1 HTTP/1.1\r\nHost: node:8080\r\n\r\n"
      "PROPFIND /dav HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(out.error_status, 0) << out.error_message;
  ASSERT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.requests[0].path, "*");
  EXPECT_EQ(out.requests[1].method, "DELETE");
  EXPECT_EQ(out.requests[1].path, "/system/functions");
  EXPECT_EQ(out.requests[1].query, "x=1");
  EXPECT_EQ(out.requests[2].method, "PROPFIND");
}

TEST(RequestParserTest, ABufferReusedAcrossManyRequestsStaysSmall) {
  RequestParser parser;
  const std::string request =
      "POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'z');
  for (int i = 0; i < 10000; ++i) {
    parser.Feed(request);
    auto r = parser.Next();
    ASSERT_TRUE(r.has_value());
    ASSERT_NE(*r, nullptr);
    ASSERT_EQ((*r)->body.size(), 100u);
  }
  EXPECT_LE(parser.buffered_bytes(), request.size());
}

// Differential check: however the bytes are cut, the parser must reach the same requests and
// the same error. Inputs are random mutations of the pipelined stream (seeded: reproducible).
TEST(RequestParserTest, RandomCutsOfMutatedStreamsAgreeWithWholeBufferParsing) {
  std::mt19937 rng(20261202);
  ParserOptions options;
  options.max_header_bytes = 96;
  options.max_header_count = 3;
  options.max_body_bytes = 16;
  int errors = 0, clean = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string input(kPipelined);
    int mutations = std::uniform_int_distribution<int>(0, 4)(rng);
    for (int m = 0; m < mutations; ++m) {
      std::size_t at = std::uniform_int_distribution<std::size_t>(0, input.size() - 1)(rng);
      switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
        case 0:
          input[at] = char(std::uniform_int_distribution<int>(0, 255)(rng));
          break;
        case 1:
          input.erase(at, 1);
          break;
        case 2:
          input.insert(at, 1, "\r\n:; 0aZ\t"[rng() % 10]);
          break;
        case 3:
          input.insert(at, input.substr(at, rng() % 40));
          break;
      }
    }
    std::vector<std::size_t> cuts;
    for (std::size_t off = 0; off < input.size();) {
      off += 1 + rng() % 24;
      if (off < input.size()) cuts.push_back(off);
    }
    const ParserOptions& o = (round % 2) ? options : ParserOptions{};
    Outcome whole = ParseAll(input, o);
    Outcome pieces = ParseWithCuts(input, cuts, o);
    ASSERT_EQ(whole.requests.size(), pieces.requests.size()) << "round " << round;
    ASSERT_TRUE(whole == pieces) << "round " << round << ": " << whole.error_message << " vs "
                                 << pieces.error_message
                                 << "\ninput: " << testing::PrintToString(input)
                                 << "\ncuts: " << testing::PrintToString(cuts);
    (whole.error_status ? errors : clean)++;
  }
  // The mutations must exercise both outcomes, or this test proves little.
  EXPECT_GT(errors, 300);
  EXPECT_GT(clean, 300);
}

}  // namespace
}  // namespace junction::http
