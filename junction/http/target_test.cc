// target_test.cc — request-target splitting into path and query.
#include "junction/http/target.h"

#include <gtest/gtest.h>

namespace junction::http {
namespace {

TEST(TargetTest, OriginFormSplitsAtFirstQuestionMark) {
  Target t = SplitTarget("/function/echo?x=1&y=?2");
  EXPECT_EQ(t.path, "/function/echo");
  EXPECT_EQ(t.query, "x=1&y=?2");
}

TEST(TargetTest, NoQueryGivesEmptyQuery) {
  Target t = SplitTarget("/healthz");
  EXPECT_EQ(t.path, "/healthz");
  EXPECT_EQ(t.query, "");
  EXPECT_EQ(SplitTarget("/a?").query, "");
}

TEST(TargetTest, AbsoluteFormLosesSchemeAndAuthority) {
  Target t = SplitTarget("http://node:8080/function/sleep?ms=5");
  EXPECT_EQ(t.path, "/function/sleep");
  EXPECT_EQ(t.query, "ms=5");
  EXPECT_EQ(SplitTarget("http://node:8080").path, "/");
  EXPECT_EQ(SplitTarget("http://node:8080?q=1").query, "q=1");
}

TEST(TargetTest, FragmentIsDroppedAndAsteriskKept) {
  EXPECT_EQ(SplitTarget("/p?q=1#frag").query, "q=1");
  EXPECT_EQ(SplitTarget("/p#frag").path, "/p");
  EXPECT_EQ(SplitTarget("*").path, "*");
}

}  // namespace
}  // namespace junction::http
