// counter_test.cc — WrapDelta and IntervalMeter: deltas, wraps, baselines, lost counters.
#include "energy/sensors/counter.h"

#include <gtest/gtest.h>

namespace energy {
namespace {

CounterReading R(Zone z, uint32_t domain, uint64_t v, uint64_t range) {
  return CounterReading{CounterKey{Source::kRapl, z, domain}, Microjoules{v}, Microjoules{range}};
}

TEST(WrapDeltaTest, ForwardAndWrapped) {
  EXPECT_EQ(WrapDelta(Microjoules{100}, Microjoules{350}, Microjoules{1000})->value, 250u);
  // 900 -> 1000 is 100, then 0 -> 200 is 200: 300 in all.
  EXPECT_EQ(WrapDelta(Microjoules{900}, Microjoules{200}, Microjoules{1000})->value, 300u);
  EXPECT_EQ(WrapDelta(Microjoules{5}, Microjoules{5}, Microjoules{0})->value, 0u);
}

TEST(WrapDeltaTest, BackwardsWithoutRangeIsAnError) {
  auto d = WrapDelta(Microjoules{900}, Microjoules{200}, Microjoules{0});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), junction::ErrorCode::kInvalidArgument);
  EXPECT_NE(d.error().message().find("reset"), std::string::npos);
  EXPECT_FALSE(WrapDelta(Microjoules{10}, Microjoules{2000}, Microjoules{1000}));
}

TEST(IntervalMeterTest, BaselineThenIntervalsWithWrap) {
  IntervalMeter meter;
  auto first = meter.Add({1000, {R(Zone::kPackage, 0, 800, 1000), R(Zone::kDram, 0, 10, 0)}});
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->has_value());
  auto second = meter.Add({2000, {R(Zone::kPackage, 0, 100, 1000), R(Zone::kDram, 0, 40, 0)}});
  ASSERT_TRUE(second && second->has_value());
  const IntervalEnergy& iv = **second;
  EXPECT_EQ(iv.begin_ns, 1000);
  EXPECT_EQ(iv.end_ns, 2000);
  EXPECT_DOUBLE_EQ(iv.joules[Zone::kPackage].value, 300e-6);
  EXPECT_DOUBLE_EQ(iv.joules[Zone::kDram].value, 30e-6);
  EXPECT_FALSE(iv.joules.Has(Zone::kCore));
  EXPECT_EQ(iv.wraps, 1u);
  EXPECT_EQ(meter.total_wraps(), 1u);
  EXPECT_EQ(iv.joules.sources.ToString(), "rapl");
}

TEST(IntervalMeterTest, SumsDomainsPerZone) {
  IntervalMeter meter;
  ASSERT_TRUE(meter.Add({0, {R(Zone::kPackage, 0, 0, 0), R(Zone::kPackage, 1, 0, 0)}}));
  auto iv = meter.Add({10, {R(Zone::kPackage, 0, 7, 0), R(Zone::kPackage, 1, 5, 0)}});
  ASSERT_TRUE(iv && iv->has_value());
  EXPECT_DOUBLE_EQ((*iv)->joules[Zone::kPackage].value, 12e-6);
}

TEST(IntervalMeterTest, DisappearedCounterAndTimeTravelAreErrors) {
  IntervalMeter meter;
  ASSERT_TRUE(meter.Add({0, {R(Zone::kPackage, 0, 0, 0), R(Zone::kDram, 0, 0, 0)}}));
  auto lost = meter.Add({10, {R(Zone::kPackage, 0, 7, 0)}});
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), junction::ErrorCode::kNotFound);
  // The failed snapshot did not move the baseline: the next good one covers [0, 20].
  auto iv = meter.Add({20, {R(Zone::kPackage, 0, 9, 0), R(Zone::kDram, 0, 4, 0)}});
  ASSERT_TRUE(iv && iv->has_value());
  EXPECT_EQ((*iv)->begin_ns, 0);
  EXPECT_DOUBLE_EQ((*iv)->joules[Zone::kPackage].value, 9e-6);
  EXPECT_FALSE(meter.Add({5, {R(Zone::kPackage, 0, 9, 0), R(Zone::kDram, 0, 4, 0)}}));
}

TEST(ZoneJoulesTest, NodeTotalAvoidsDoubleCounting) {
  ZoneJoules z;
  z.Set(Zone::kPackage, Joules{10});
  z.Set(Zone::kCore, Joules{6});
  z.Set(Zone::kDram, Joules{2});
  z.Set(Zone::kGpu, Joules{30});
  EXPECT_DOUBLE_EQ(z.NodeTotal().value, 42);
  z.Set(Zone::kPsys, Joules{15});
  EXPECT_DOUBLE_EQ(z.NodeTotal().value, 45);
}

}  // namespace
}  // namespace energy
