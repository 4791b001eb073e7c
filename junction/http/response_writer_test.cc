// response_writer_test.cc — ResponseWriter bytes, framing rules, validation, buffer reuse.
#include "junction/http/response_writer.h"

#include <gtest/gtest.h>

#include "junction/http/http_date.h"
#include "junction/http/request_parser.h"
#include "junction/http/response_parser.h"

namespace junction::http {
namespace {

TEST(ResponseWriterTest, ContentLengthResponse) {
  std::string out;
  ResponseWriter w(out, {});
  w.Start(200);
  ASSERT_TRUE(w.AddHeader("Content-Type", "text/plain").has_value());
  w.Finish("hello");
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_TRUE(w.keep_alive());
}

TEST(ResponseWriterTest, HeadGetsTheLengthButNoBody) {
  std::string out;
  ResponseWriter w(out, {.head = true});
  w.Start(200);
  w.Finish("hello");
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  EXPECT_FALSE(w.body_allowed());
}

TEST(ResponseWriterTest, NoContentHasNeitherLengthNorBody) {
  std::string out;
  ResponseWriter w(out, {});
  w.Start(204);
  w.Finish("ignored");
  EXPECT_EQ(out, "HTTP/1.1 204 No Content\r\n\r\n");
}

TEST(ResponseWriterTest, CloseWhenTheRequestOrTheCallerSaysSo) {
  std::string out;
  ResponseWriter w(out, {.keep_alive = false});
  w.Start(404);
  w.Finish("");
  EXPECT_EQ(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_FALSE(w.keep_alive());

  std::string out2;
  ResponseWriter w2(out2, {});
  w2.Start(503);
  w2.SetClose();
  w2.Finish("x");
  EXPECT_EQ(out2,
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx");
}

TEST(ResponseWriterTest, Http10KeepAliveIsExplicit) {
  std::string out;
  ResponseWriter w(out, {.keep_alive = true, .http10 = true});
  w.Start(200);
  w.Finish("a");
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\na");
}

TEST(ResponseWriterTest, ChunkedStreamWithTrailers) {
  std::string out;
  ResponseWriter w(out, {});
  w.Start(200);
  w.BeginChunked();
  w.WriteChunk("hello ");
  w.WriteChunk("");  // would end the body: skipped
  w.WriteChunk(std::string(26, 'z'));
  const Header trailers[] = {{"X-Sum", "7"}};
  ASSERT_TRUE(w.EndChunked(trailers).has_value());
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            "6\r\nhello \r\n1a\r\n" +
                std::string(26, 'z') + "\r\n0\r\nX-Sum: 7\r\n\r\n");
  EXPECT_TRUE(w.keep_alive());

  ResponseParser parser;
  parser.Feed(out);
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->body, "hello " + std::string(26, 'z'));
  EXPECT_EQ((*r)->trailers.Find("x-sum"), "7");
}

TEST(ResponseWriterTest, ChunkedToHttp10BecomesCloseDelimited) {
  std::string out;
  ResponseWriter w(out, {.keep_alive = true, .http10 = true});
  w.Start(200);
  w.BeginChunked();
  w.WriteChunk("ab");
  w.WriteChunk("cd");
  ASSERT_TRUE(w.EndChunked().has_value());
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabcd");
  EXPECT_FALSE(w.keep_alive());
}

TEST(ResponseWriterTest, ChunkedHeadResponseHasNoChunks) {
  std::string out;
  ResponseWriter w(out, {.head = true});
  w.Start(200);
  w.BeginChunked();
  w.WriteChunk("abc");
  ASSERT_TRUE(w.EndChunked().has_value());
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
}

TEST(ResponseWriterTest, EndHeadersLeavesTheBodyToTheCaller) {
  std::string out;
  ResponseWriter w(out, {});
  w.Start(200);
  w.EndHeaders(1 << 20);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n");
}

TEST(ResponseWriterTest, UnknownStatusHasAnEmptyReason) {
  std::string out;
  ResponseWriter w(out, {});
  w.Start(599);
  w.Finish("");
  EXPECT_EQ(out, "HTTP/1.1 599 \r\nContent-Length: 0\r\n\r\n");
}

TEST(ResponseWriterTest, AddHeaderRefusesInjectionBadNamesAndFramingFields) {
  std::string out;
  ResponseWriter w(out, {});
  w.Start(200);
  std::size_t head_size = out.size();
  for (auto [name, value] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
           {"X-Evil", "a\r\nSet-Cookie: x=y"},
           {"X-Evil", "a\nb"},
           {"X-Evil", std::string_view("a\0b", 3)},
           {"Bad Name", "v"},
           {"", "v"},
           {"X:Y", "v"},
           {"Content-Length", "5"},
           {"transfer-encoding", "chunked"},
           {"Connection", "close"}}) {
    auto s = w.AddHeader(name, value);
    EXPECT_FALSE(s.has_value()) << name;
    if (!s) {
      EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_EQ(out.size(), head_size);  // nothing was written
  EXPECT_TRUE(w.AddHeader("X-Ok_1.2~", "any value: with \"quotes\"\tand tab").has_value());
  w.BeginChunked();
  const Header bad[] = {{"X-T", "a\r\n"}};
  EXPECT_FALSE(w.EndChunked(bad).has_value());
}

TEST(ResponseWriterTest, ContinueIsTheInterimResponse) {
  std::string out;
  ResponseWriter::AppendContinue(out);
  EXPECT_EQ(out, "HTTP/1.1 100 Continue\r\n\r\n");
}

TEST(ResponseWriterTest, AppendsAndStopsAllocatingOnceTheBufferHasGrown) {
  std::string out;
  auto write_pair = [&out] {
    for (int i = 0; i < 2; ++i) {
      ResponseWriter w(out, {});
      w.Start(200);
      (void)w.AddHeader("Content-Type", "application/json");
      w.Finish(R"({"ok":true})");
    }
  };
  write_pair();
  const std::string first = out;
  EXPECT_EQ(first.size() % 2, 0u);
  EXPECT_EQ(first.substr(0, first.size() / 2), first.substr(first.size() / 2));
  const char* data = out.data();
  std::size_t capacity = out.capacity();
  for (int round = 0; round < 100; ++round) {
    out.clear();
    write_pair();
    ASSERT_EQ(out, first);
    ASSERT_EQ(out.data(), data);
    ASSERT_EQ(out.capacity(), capacity);
  }
}

TEST(ResponseWriterTest, ContextForFollowsTheRequest) {
  RequestParser parser;
  parser.Feed("HEAD / HTTP/1.0\r\n\r\n");
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value());
  ASSERT_NE(*r, nullptr);
  ResponseContext c = ContextFor(**r);
  EXPECT_TRUE(c.head);
  EXPECT_TRUE(c.http10);
  EXPECT_FALSE(c.keep_alive);
}

TEST(ResponseWriterTest, DateIsImfFixdate) {
  char buf[kHttpDateLength];
  EXPECT_EQ(FormatHttpDate(784111777, buf), "Sun, 06 Nov 1994 08:49:37 GMT");  // RFC 9110 example
  EXPECT_EQ(FormatHttpDate(0, buf), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(CachedHttpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(CachedHttpDate(784111778), "Sun, 06 Nov 1994 08:49:38 GMT");
  std::string out;
  ResponseWriter w(out, {});
  w.Start(200);
  w.AddDate(784111777);
  w.Finish("");
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 0\r\n\r\n");
}

}  // namespace
}  // namespace junction::http
