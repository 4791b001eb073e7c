// uuid_test.cc — UUID text and bytes: round trip, and what is not a lowercase UUID.
#include "junction/base/uuid.h"

#include <gtest/gtest.h>

#include <string>

namespace junction {
namespace {

TEST(UuidTest, TextAndBytesRoundTrip) {
  const std::string text = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0ff";
  std::uint8_t bytes[16];
  ASSERT_TRUE(ParseUuid(text, bytes));
  EXPECT_EQ(bytes[0], 0x0f);
  EXPECT_EQ(bytes[15], 0xff);
  char out[kUuidTextSize];
  FormatUuid(bytes, out);
  EXPECT_EQ(std::string(out, kUuidTextSize), text);
}

TEST(UuidTest, AnythingButALowercaseUuidIsRefused) {
  std::uint8_t bytes[16];
  EXPECT_FALSE(ParseUuid("0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0FF", bytes));  // uppercase
  EXPECT_FALSE(ParseUuid("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f", bytes));   // short
  EXPECT_FALSE(ParseUuid("0f1e2d3c_4b5a-4978-8695-a4b3c2d1e0ff", bytes));  // no dash
  EXPECT_FALSE(ParseUuid("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0fg", bytes));  // not a digit
  EXPECT_FALSE(ParseUuid("call-42", bytes));
}

}  // namespace
}  // namespace junction
