// response_parser_test.cc — ResponseParser framing, no-body rules, pipelining and errors.
//
// Content-Length, chunked and read-until-close bodies; HEAD/204/304/1xx; every split point.
#include "junction/http/response_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace junction::http {
namespace {

struct OwnedResponse {
  int status = 0;
  std::string reason;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers, trailers;
  bool keep_alive = false;

  bool operator==(const OwnedResponse&) const = default;
};

OwnedResponse Copy(const Response& r) {
  OwnedResponse o;
  o.status = r.status;
  o.reason = std::string(r.reason);
  o.body = std::string(r.body);
  for (const Header& h : r.headers) o.headers.emplace_back(h.name, h.value);
  for (const Header& h : r.trailers) o.trailers.emplace_back(h.name, h.value);
  o.keep_alive = r.keep_alive;
  return o;
}

struct Outcome {
  std::vector<OwnedResponse> responses;
  bool failed = false;
  std::string error;

  bool operator==(const Outcome&) const = default;
};

void Drain(ResponseParser& parser, Outcome& out) {
  while (!out.failed) {
    auto r = parser.Next();
    if (!r) {
      out.failed = true;
      out.error = r.error().message();
      return;
    }
    if (*r == nullptr) return;
    out.responses.push_back(Copy(**r));
  }
}

// Parses `input` as the answers to requests with `methods`, cut at `cuts`, then signals EOF
// when `eof` is set.
Outcome Parse(std::string_view input, const std::vector<Method>& methods,
              const std::vector<std::size_t>& cuts = {}, bool eof = false,
              const ParserOptions& options = ResponseParser::DefaultOptions()) {
  ResponseParser parser(options);
  for (Method m : methods) parser.ExpectResponseTo(m);
  Outcome out;
  std::size_t prev = 0;
  for (std::size_t cut : cuts) {
    parser.Feed(input.substr(prev, cut - prev));
    Drain(parser, out);
    prev = cut;
  }
  parser.Feed(input.substr(prev));
  Drain(parser, out);
  if (eof && !out.failed) {
    auto r = parser.FinishAtEof();
    if (!r) {
      out.failed = true;
      out.error = r.error().message();
    } else if (*r) {
      out.responses.push_back(Copy(**r));
    }
  }
  return out;
}

TEST(ResponseParserTest, ContentLengthResponse) {
  Outcome out =
      Parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello", {Method::kGet});
  ASSERT_FALSE(out.failed) << out.error;
  ASSERT_EQ(out.responses.size(), 1u);
  EXPECT_EQ(out.responses[0].status, 200);
  EXPECT_EQ(out.responses[0].reason, "OK");
  EXPECT_EQ(out.responses[0].body, "hello");
  EXPECT_TRUE(out.responses[0].keep_alive);
}

TEST(ResponseParserTest, ChunkedResponseWithExtensionsAndTrailers) {
  constexpr std::string_view kInput =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;x=y\r\nabc\r\n1\r\nd\r\n0\r\nX-Digest: 99\r\n\r\n";
  for (std::size_t cut = 0; cut <= kInput.size(); ++cut) {
    Outcome out = Parse(kInput, {Method::kGet}, {cut});
    ASSERT_FALSE(out.failed) << out.error;
    ASSERT_EQ(out.responses.size(), 1u);
    EXPECT_EQ(out.responses[0].body, "abcd");
    ASSERT_EQ(out.responses[0].trailers.size(), 1u);
    EXPECT_EQ(out.responses[0].trailers[0].second, "99");
  }
}

TEST(ResponseParserTest, BodyUntilCloseEndsAtEof) {
  Outcome out = Parse("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart one, part two",
                      {Method::kGet}, {30, 50}, /*eof=*/true);
  ASSERT_FALSE(out.failed) << out.error;
  ASSERT_EQ(out.responses.size(), 1u);
  EXPECT_EQ(out.responses[0].body, "part one, part two");
  EXPECT_FALSE(out.responses[0].keep_alive);
}

TEST(ResponseParserTest, EofInsideAContentLengthBodyIsAnError) {
  Outcome out = Parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", {Method::kGet}, {},
                      /*eof=*/true);
  EXPECT_TRUE(out.failed);
  EXPECT_TRUE(out.responses.empty());
}

TEST(ResponseParserTest, ResponseToHeadHasNoBodyDespiteContentLength) {
  Outcome out = Parse(
      "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
      {Method::kHead, Method::kGet});
  ASSERT_FALSE(out.failed) << out.error;
  ASSERT_EQ(out.responses.size(), 2u);
  EXPECT_EQ(out.responses[0].body, "");
  EXPECT_EQ(out.responses[1].body, "ok");
}

TEST(ResponseParserTest, NoContentAndNotModifiedHaveNoBody) {
  Outcome out = Parse(
      "HTTP/1.1 204 No Content\r\n\r\n"
      "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!",
      {Method::kDelete, Method::kGet, Method::kGet});
  ASSERT_FALSE(out.failed) << out.error;
  ASSERT_EQ(out.responses.size(), 3u);
  EXPECT_EQ(out.responses[0].status, 204);
  EXPECT_EQ(out.responses[1].status, 304);
  EXPECT_EQ(out.responses[2].body, "!");
}

TEST(ResponseParserTest, InterimContinueComesBeforeTheFinalResponse) {
  ResponseParser parser;
  parser.ExpectResponseTo(Method::kHead);
  parser.ExpectResponseTo(Method::kGet);
  parser.Feed(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
  auto interim = parser.Next();
  ASSERT_TRUE(interim.has_value());
  ASSERT_NE(*interim, nullptr);
  EXPECT_TRUE((*interim)->is_interim());
  EXPECT_EQ((*interim)->status, 100);
  // The interim response did not consume the HEAD expectation: the next one has no body.
  auto head = parser.Next();
  ASSERT_TRUE(head.has_value()) << head.error().message();
  ASSERT_NE(*head, nullptr);
  EXPECT_EQ((*head)->status, 200);
  EXPECT_EQ((*head)->body, "");
  auto get = parser.Next();
  ASSERT_TRUE(get.has_value()) << get.error().message();
  ASSERT_NE(*get, nullptr);
  EXPECT_EQ((*get)->body, "abc");
}

TEST(ResponseParserTest, PipelinedResponsesSplitAtEveryOffset) {
  constexpr std::string_view kInput =
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
      "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nsecond\r\n0\r\n\r\n"
      "HTTP/1.0 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nthird";
  for (std::size_t cut = 0; cut <= kInput.size(); ++cut) {
    Outcome out = Parse(kInput, {Method::kGet, Method::kPost, Method::kGet}, {cut});
    ASSERT_FALSE(out.failed) << out.error;
    ASSERT_EQ(out.responses.size(), 3u) << "cut " << cut;
    EXPECT_EQ(out.responses[0].body, "first");
    EXPECT_EQ(out.responses[1].status, 404);
    EXPECT_EQ(out.responses[1].body, "second");
    EXPECT_EQ(out.responses[2].body, "third");
    EXPECT_FALSE(out.responses[2].keep_alive);  // HTTP/1.0 without keep-alive
  }
}

TEST(ResponseParserTest, BodyOverTheLimitIsAnError) {
  ParserOptions options = ResponseParser::DefaultOptions();
  options.max_body_bytes = 4;
  Outcome out = Parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", {Method::kGet}, {},
                      false, options);
  EXPECT_TRUE(out.failed);
  EXPECT_NE(out.error.find("max_body_bytes"), std::string::npos);
  Outcome until_close = Parse("HTTP/1.1 200 OK\r\n\r\nhello", {Method::kGet}, {}, true, options);
  EXPECT_TRUE(until_close.failed);
}

TEST(ResponseParserTest, MalformedStatusLinesAreErrors) {
  for (std::string_view bad : {"HTTP/1.1 2x0 OK\r\n\r\n", "HTTX/1.1 200 OK\r\n\r\n",
                               "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                               "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n"}) {
    Outcome out = Parse(bad, {Method::kGet});
    EXPECT_TRUE(out.failed) << bad;
    EXPECT_TRUE(out.responses.empty()) << bad;
  }
}

// Differential check, as for requests: random mutations of a pipelined response stream parse
// to the same responses and the same error however they are cut, EOF included.
TEST(ResponseParserTest, RandomCutsOfMutatedStreamsAgreeWithWholeBufferParsing) {
  constexpr std::string_view kStream =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
      "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"
      "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n6;e\r\nsecond\r\n0\r\nT: "
      "1\r\n\r\n"
      "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nuntil close";
  const std::vector<Method> methods = {Method::kPost, Method::kHead, Method::kGet, Method::kGet};
  std::mt19937 rng(42);
  ParserOptions small = ResponseParser::DefaultOptions();
  small.max_header_bytes = 64;
  small.max_body_bytes = 8;
  small.max_header_count = 2;
  int errors = 0, clean = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string input(kStream);
    int mutations = std::uniform_int_distribution<int>(0, 4)(rng);
    for (int m = 0; m < mutations; ++m) {
      std::size_t at = std::uniform_int_distribution<std::size_t>(0, input.size() - 1)(rng);
      switch (rng() % 4) {
        case 0:
          input[at] = char(rng() % 256);
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
    const ParserOptions o = (round % 2) ? small : ResponseParser::DefaultOptions();
    Outcome whole = Parse(input, methods, {}, /*eof=*/true, o);
    Outcome pieces = Parse(input, methods, cuts, /*eof=*/true, o);
    ASSERT_TRUE(whole == pieces) << "round " << round << ": " << whole.error << " vs "
                                 << pieces.error << "\ninput: " << testing::PrintToString(input);
    (whole.failed ? errors : clean)++;
  }
  EXPECT_GT(errors, 2000);
  EXPECT_GT(clean, 2000);
}

}  // namespace
}  // namespace junction::http
