// json_error_test.cc — JSON error bodies and complete error responses.
#include "junction/http/json_error.h"

#include <gtest/gtest.h>

#include "junction/http/response_parser.h"

namespace junction::http {
namespace {

TEST(JsonErrorTest, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  AppendJsonError(out, "bad \"x\"\\y\n\x01z");
  EXPECT_EQ(out, R"({"error":"bad \"x\"\\y\n\u0001z"})");
}

TEST(JsonErrorTest, AppendsWithoutClearing) {
  std::string out = "prefix";
  AppendJsonError(out, "m");
  EXPECT_EQ(out, R"(prefix{"error":"m"})");
}

TEST(JsonErrorTest, ErrorResponseIsCompleteAndClosesByDefault) {
  std::string out;
  AppendErrorResponse(out, 431, "too many headers");
  EXPECT_EQ(out,
            "HTTP/1.1 431 Request Header Fields Too Large\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 28\r\n"
            "Connection: close\r\n"
            "\r\n"
            R"({"error":"too many headers"})");
  // Let an independent parser agree.
  ResponseParser parser;
  parser.Feed(out);
  auto r = parser.Next();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->status, 431);
  EXPECT_EQ((*r)->body, R"({"error":"too many headers"})");
  EXPECT_FALSE((*r)->keep_alive);
}

}  // namespace
}  // namespace junction::http
