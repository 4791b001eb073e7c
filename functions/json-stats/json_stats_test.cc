// json_stats_test.cc — json-stats' parser (what it accepts, refuses, and why) and statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "stats.h"

namespace faasnode::functions {
namespace {

TEST(ParseNumberArrayTest, AcceptsIntegersUnsignedFloatsAndWhitespace) {
  auto v = ParseNumberArray(" [1, -2, 18446744073709551615, 2.5e1 ,0]\n");
  ASSERT_TRUE(v.has_value()) << v.error();
  ASSERT_EQ(v->size(), 5u);
  EXPECT_EQ((*v)[1], -2.0);
  EXPECT_EQ((*v)[2], 18446744073709551615.0);
  EXPECT_EQ((*v)[3], 25.0);
  auto empty = ParseNumberArray("[]");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(ParseNumberArrayTest, RefusesWithAMessageSayingWhatWasWrong) {
  struct Case {
    const char* body;
    const char* says;
  };
  const Case cases[] = {
      {"", "invalid JSON"},
      {"[1, 2", "invalid JSON"},
      {"[1, 2] x", "invalid JSON"},
      {"{\"a\": 1}", "expected a JSON array of numbers, got an object"},
      {"42", "expected a JSON array of numbers, got a number"},
      {"[1, \"2\"]", "element 1 is a string, not a number"},
      {"[1, 2, [3]]", "element 2 is an array, not a number"},
      {"[null]", "element 0 is null, not a number"},
      {"[true]", "element 0 is a boolean, not a number"},
      {"[1e400]", "invalid JSON"},
      {"[NaN]", "invalid JSON"},
  };
  for (const Case& c : cases) {
    auto v = ParseNumberArray(c.body);
    ASSERT_FALSE(v.has_value()) << c.body;
    EXPECT_NE(v.error().find(c.says), std::string::npos) << c.body << " -> " << v.error();
  }
}

TEST(ComputeStatsTest, KnownValues) {
  std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  Stats s = ComputeStats(v);
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.stddev, 2);  // the textbook population example
  EXPECT_DOUBLE_EQ(s.median, 4.5);

  std::vector<double> odd = {3, -1, 10};
  Stats o = ComputeStats(odd);
  EXPECT_DOUBLE_EQ(o.median, 3);
  EXPECT_DOUBLE_EQ(o.mean, 4);

  std::vector<double> one = {7.25};
  Stats u = ComputeStats(one);
  EXPECT_EQ(u.median, 7.25);
  EXPECT_EQ(u.stddev, 0);
}

TEST(ComputeStatsTest, LargeOffsetDoesNotCancel) {
  // Naive sum-of-squares loses every digit here; Welford keeps them.
  std::vector<double> v = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
  Stats s = ComputeStats(v);
  EXPECT_DOUBLE_EQ(s.mean, 1e9 + 10);
  EXPECT_NEAR(s.stddev, std::sqrt(22.5), 1e-6);
}

TEST(StatsJsonTest, FieldsAndEmptyArray) {
  std::vector<double> v = {1, 2, 3, 4};
  auto j = nlohmann::json::parse(StatsJson(ComputeStats(v)));
  EXPECT_EQ(j["count"], 4);
  EXPECT_EQ(j["min"], 1.0);
  EXPECT_EQ(j["max"], 4.0);
  EXPECT_EQ(j["mean"], 2.5);
  EXPECT_EQ(j["median"], 2.5);
  EXPECT_NEAR(j["stddev"].get<double>(), std::sqrt(1.25), 1e-12);

  std::vector<double> none;
  auto e = nlohmann::json::parse(StatsJson(ComputeStats(none)));
  EXPECT_EQ(e["count"], 0);
  EXPECT_TRUE(e["mean"].is_null());
  EXPECT_TRUE(e["median"].is_null());

  auto err = nlohmann::json::parse(ErrorJson("bad \xff byte"));
  EXPECT_TRUE(err["error"].is_string());
}

}  // namespace
}  // namespace faasnode::functions
