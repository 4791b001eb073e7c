// error_test.cc — Status<T> carries values and errors with their codes and messages.
#include "junction/base/error.h"

#include <gtest/gtest.h>

namespace junction {
namespace {

Status<int> Half(int v) {
  if (v % 2 != 0) return MakeError(ErrorCode::kInvalidArgument, "odd value; pass an even one");
  return v / 2;
}

TEST(Error, ValueAndErrorPaths) {
  auto ok = Half(8);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, 4);
  auto bad = Half(3);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "odd value; pass an even one");
}

TEST(Error, FromErrnoAppendsStrerror) {
  Error e = Error::FromErrno("open /nonexistent", ENOENT);
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_EQ(e.sys_errno(), ENOENT);
  EXPECT_NE(e.message().find("open /nonexistent: "), std::string::npos);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kTimedOut), "timed out");
}

}  // namespace
}  // namespace junction
