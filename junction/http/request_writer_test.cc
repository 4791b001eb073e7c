// request_writer_test.cc — RequestWriter bytes, validation and round trips via RequestParser.
#include "junction/http/request_writer.h"

#include <gtest/gtest.h>

#include "junction/http/request_parser.h"

namespace junction::http {
namespace {

TEST(RequestWriterTest, GetWithoutBodyHasNoContentLength) {
  std::string out;
  RequestWriter w(out);
  ASSERT_TRUE(w.Start(Method::kGet, "/function/echo?x=1").has_value());
  ASSERT_TRUE(w.AddHeader("Host", "node:8080").has_value());
  w.Finish("");
  EXPECT_EQ(out, "GET /function/echo?x=1 HTTP/1.1\r\nHost: node:8080\r\n\r\n");
}

TEST(RequestWriterTest, PostAlwaysHasContentLength) {
  std::string out;
  RequestWriter w(out);
  ASSERT_TRUE(w.Start(Method::kPost, "/f").has_value());
  ASSERT_TRUE(w.AddHeader("Host", "n").has_value());
  w.SetClose();
  w.Finish("");
  EXPECT_EQ(out, "POST /f HTTP/1.1\r\nHost: n\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

TEST(RequestWriterTest, ChunkedRequestRoundTripsThroughTheParser) {
  std::string out;
  RequestWriter w(out);
  ASSERT_TRUE(w.Start(Method::kPut, "/function/cat").has_value());
  ASSERT_TRUE(w.AddHeader("Host", "n").has_value());
  w.BeginChunked();
  w.WriteChunk("abc");
  w.WriteChunk("");
  w.WriteChunk("defgh");
  const Header trailers[] = {{"X-Sum", "8"}};
  ASSERT_TRUE(w.EndChunked(trailers).has_value());
  EXPECT_EQ(out,
            "PUT /function/cat HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n"
            "3\r\nabc\r\n5\r\ndefgh\r\n0\r\nX-Sum: 8\r\n\r\n");
  RequestParser parser;
  parser.Feed(out);
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->method, Method::kPut);
  EXPECT_EQ((*r)->body, "abcdefgh");
  EXPECT_EQ((*r)->trailers.Find("x-sum"), "8");
}

TEST(RequestWriterTest, PipelinedRequestsRoundTrip) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    RequestWriter w(out);
    ASSERT_TRUE(
        w.Start(i == 1 ? Method::kHead : Method::kPost, "/r" + std::to_string(i)).has_value());
    ASSERT_TRUE(w.AddHeader("Host", "n").has_value());
    w.Finish(i == 1 ? "" : std::string(i + 1, 'b'));
  }
  RequestParser parser;
  parser.Feed(out);
  for (int i = 0; i < 3; ++i) {
    auto r = parser.Next();
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_NE(*r, nullptr);
    EXPECT_EQ((*r)->path, "/r" + std::to_string(i));
    EXPECT_EQ((*r)->body, i == 1 ? "" : std::string(i + 1, 'b'));
  }
}

TEST(RequestWriterTest, RefusesBadTargetsMethodsAndFields) {
  std::string out;
  RequestWriter w(out);
  EXPECT_FALSE(w.Start(Method::kOther, "/").has_value());
  EXPECT_FALSE(w.Start(Method::kGet, "").has_value());
  EXPECT_FALSE(w.Start(Method::kGet, "/a b").has_value());
  EXPECT_FALSE(w.Start(Method::kGet, "/a\r\nX: y").has_value());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(w.Start(Method::kGet, "/").has_value());
  EXPECT_FALSE(w.AddHeader("Content-Length", "1").has_value());
  EXPECT_FALSE(w.AddHeader("Connection", "close").has_value());
  EXPECT_FALSE(w.AddHeader("Host", "a\nb").has_value());
  EXPECT_FALSE(w.AddHeader("Ho st", "a").has_value());
  EXPECT_EQ(out, "GET / HTTP/1.1\r\n");
}

}  // namespace
}  // namespace junction::http
