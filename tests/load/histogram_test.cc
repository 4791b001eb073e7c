// histogram_test.cc — the HDR-style histogram: bucket arithmetic, precision, percentiles, merge.
#include "tests/load/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

namespace faasload {
namespace {

TEST(HistogramTest, BucketsCoverEveryValueContiguously) {
  for (std::size_t i = 0; i + 1 < Histogram::kBuckets; ++i) {
    ASSERT_EQ(Histogram::HighestOf(i) + 1, Histogram::LowestOf(i + 1)) << "bucket " << i;
  }
  EXPECT_EQ(Histogram::HighestOf(Histogram::kBuckets - 1), Histogram::kMaxValue - 1);
}

TEST(HistogramTest, IndexOfRoundTripsAndKeepsRelativePrecision) {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 200000; ++n) {
    const std::uint64_t v = rng() % Histogram::kMaxValue >> (rng() % 40);
    const std::size_t i = Histogram::IndexOf(v);
    ASSERT_LT(i, Histogram::kBuckets);
    ASSERT_LE(Histogram::LowestOf(i), v);
    ASSERT_GE(Histogram::HighestOf(i), v);
    const double width = static_cast<double>(Histogram::HighestOf(i) - Histogram::LowestOf(i));
    ASSERT_LE(width, std::max(0.0, static_cast<double>(v) / 1024.0)) << v;
  }
  EXPECT_EQ(Histogram::IndexOf(0), 0u);
  EXPECT_EQ(Histogram::IndexOf(2047), 2047u);
  EXPECT_EQ(Histogram::IndexOf(2048), 2048u);
}

TEST(HistogramTest, PercentilesMatchExactOrderStatisticsWithin01Percent) {
  auto h = std::make_unique<Histogram>();
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(11.0, 1.5);  // ~60 us median, long tail, in ns
  std::vector<std::uint64_t> values;
  for (int n = 0; n < 100000; ++n) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    values.push_back(v);
    h->Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * values.size())) - 1;
    const double exact = static_cast<double>(values[rank]);
    const double got = static_cast<double>(h->ValueAtPercentile(p));
    EXPECT_GE(got, exact) << "p" << p;
    EXPECT_LE(got, exact * (1 + 1.0 / 1024) + 1) << "p" << p;
  }
  EXPECT_EQ(h->ValueAtPercentile(100), values.back());
  EXPECT_EQ(h->max(), values.back());
  EXPECT_EQ(h->min(), values.front());
  EXPECT_EQ(h->count(), values.size());
  double sum = 0;
  for (auto v : values) sum += static_cast<double>(v);
  EXPECT_NEAR(h->mean(), sum / values.size(), 1e-6 * sum / values.size());
}

TEST(HistogramTest, CountAboveAndMerge) {
  auto a = std::make_unique<Histogram>();
  auto b = std::make_unique<Histogram>();
  for (std::uint64_t v = 1; v <= 1000; ++v) a->Record(v * 1000);  // 1 us .. 1 ms
  for (std::uint64_t v = 1; v <= 1000; ++v) b->Record(v * 1000 + 1'000'000);
  EXPECT_EQ(a->CountAbove(500'000), 500u);
  a->Merge(*b);
  EXPECT_EQ(a->count(), 2000u);
  EXPECT_EQ(a->CountAbove(1'000'000), 1000u);
  EXPECT_EQ(a->max(), 2'000'000u);
  EXPECT_EQ(a->min(), 1000u);
  const double p50 = static_cast<double>(a->ValueAtPercentile(50));
  EXPECT_NEAR(p50, 1'000'000, 1'000'000 / 1024.0);
  a->Reset();
  EXPECT_EQ(a->count(), 0u);
  EXPECT_EQ(a->ValueAtPercentile(99), 0u);
  EXPECT_EQ(a->max(), 0u);
}

TEST(HistogramTest, HugeValuesAreClampedAndCounted) {
  auto h = std::make_unique<Histogram>();
  h->Record(~0ull);
  h->Record(5, 3);
  EXPECT_EQ(h->clamped(), 1u);
  EXPECT_EQ(h->count(), 4u);
  EXPECT_EQ(h->max(), Histogram::kMaxValue - 1);
  EXPECT_EQ(h->ValueAtPercentile(50), 5u);
}

}  // namespace
}  // namespace faasload
