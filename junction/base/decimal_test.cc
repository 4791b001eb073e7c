// decimal_test.cc — junction::Decimal writes what std::to_chars writes.
#include "junction/base/decimal.h"

#include <gtest/gtest.h>

#include <charconv>
#include <limits>
#include <random>
#include <string>

namespace {

std::string ToChars(std::uint64_t v) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

TEST(Decimal, EdgesAndEveryLengthMatchToChars) {
  std::vector<std::uint64_t> values = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000,
                                       std::numeric_limits<std::uint64_t>::max(),
                                       std::numeric_limits<std::uint64_t>::max() - 1,
                                       1796320000202651564ULL};  // a start time, in ns
  for (std::uint64_t p = 1; p <= 10'000'000'000'000'000'000ULL / 10; p *= 10) {
    values.insert(values.end(), {p - 1, p, p + 1, 10 * p - 1});
  }
  for (std::uint64_t v : values) {
    char buf[20];
    EXPECT_EQ(junction::Decimal(buf, v), ToChars(v)) << v;
  }
}

TEST(Decimal, RandomValuesOfEveryMagnitudeMatchToChars) {
  std::mt19937_64 rng(20261203);
  for (int i = 0; i < 200'000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    char buf[20];
    ASSERT_EQ(junction::Decimal(buf, v), ToChars(v)) << v;
  }
}

}  // namespace
