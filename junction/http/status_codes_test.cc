// status_codes_test.cc — reason phrases, no-body statuses and method names.
#include "junction/http/status_codes.h"

#include <gtest/gtest.h>

#include "junction/http/method.h"

namespace junction::http {
namespace {

TEST(StatusCodesTest, ReasonPhrasesFollowRfc9110) {
  EXPECT_EQ(ReasonPhrase(kStatusOk), "OK");
  EXPECT_EQ(ReasonPhrase(kStatusNotFound), "Not Found");
  EXPECT_EQ(ReasonPhrase(kStatusContentTooLarge), "Content Too Large");
  EXPECT_EQ(ReasonPhrase(kStatusRequestHeaderFieldsTooLarge), "Request Header Fields Too Large");
  EXPECT_EQ(ReasonPhrase(kStatusTooManyRequests), "Too Many Requests");
  EXPECT_EQ(ReasonPhrase(kStatusHttpVersionNotSupported), "HTTP Version Not Supported");
  EXPECT_EQ(ReasonPhrase(599), "");
  EXPECT_EQ(ReasonPhrase(-1), "");
}

TEST(StatusCodesTest, NoBodyStatusesAre1xx204And304) {
  EXPECT_TRUE(StatusHasNoBody(100));
  EXPECT_TRUE(StatusHasNoBody(199));
  EXPECT_TRUE(StatusHasNoBody(204));
  EXPECT_TRUE(StatusHasNoBody(304));
  EXPECT_FALSE(StatusHasNoBody(200));
  EXPECT_FALSE(StatusHasNoBody(205));
  EXPECT_FALSE(StatusHasNoBody(404));
}

TEST(StatusCodesTest, MethodNames) {
  EXPECT_EQ(MethodName(Method::kGet), "GET");
  EXPECT_EQ(MethodName(Method::kHead), "HEAD");
  EXPECT_EQ(MethodName(Method::kPatch), "PATCH");
  EXPECT_EQ(MethodName(Method::kOther), "");
  for (Method m : {Method::kGet, Method::kHead, Method::kPost, Method::kPut, Method::kDelete, Method::kPatch,
                   Method::kOptions, Method::kTrace, Method::kConnect}) {
    EXPECT_EQ(MethodFromName(MethodName(m)), m) << MethodName(m);
  }
  EXPECT_EQ(MethodFromName("get"), Method::kOther) << "names are case-sensitive (RFC 9110 9.1)";
  EXPECT_EQ(MethodFromName("PROPFIND"), Method::kOther);
  EXPECT_EQ(MethodFromName(""), Method::kOther);
}

}  // namespace
}  // namespace junction::http
