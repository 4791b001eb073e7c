// power_model_test.cc — the linear power model: utilisation from cycles, energy, validation.
#include "energy/sensors/power_model.h"

#include <gtest/gtest.h>

namespace energy {
namespace {

CoreIntervalCycles Core(uint64_t elapsed, uint64_t idle, uint64_t overhead, uint64_t busy) {
  CoreIntervalCycles c;
  c.tsc_begin = 1000;
  c.tsc_end = 1000 + elapsed;
  c.idle_cycles = idle;
  c.overhead_cycles = overhead;
  if (busy > 0) c.busy.push_back({42, busy});
  return c;
}

TEST(PowerModelTest, UtilisationFromCycleAccounts) {
  EXPECT_DOUBLE_EQ(PowerModel::Utilisation(Core(1000, 1000, 0, 0)), 0.0);
  EXPECT_DOUBLE_EQ(PowerModel::Utilisation(Core(1000, 250, 250, 500)), 0.75);
  EXPECT_DOUBLE_EQ(PowerModel::Utilisation(Core(1000, 0, 0, 5000)), 1.0);  // clamped
  EXPECT_DOUBLE_EQ(PowerModel::Utilisation(Core(0, 0, 0, 0)), 0.0);
}

TEST(PowerModelTest, EnergyIsLinearBetweenIdleAndMax) {
  auto m = PowerModel::Create({Watts{1.0}, Watts{5.0}});
  ASSERT_TRUE(m);
  std::vector<CoreIntervalCycles> cores = {Core(1000, 1000, 0, 0), Core(1000, 0, 100, 900),
                                           Core(1000, 500, 0, 500)};
  // 0.5 s: idle core 0.5 J, full core 2.5 J, half core (1 + 4*0.5) * 0.5 = 1.5 J.
  IntervalEnergy e = m->Estimate(0, 500'000'000, cores);
  EXPECT_DOUBLE_EQ(e.joules[Zone::kPackage].value, 4.5);
  EXPECT_EQ(e.joules.sources.ToString(), "model");
  EXPECT_EQ(m->Estimate(10, 5, cores).joules[Zone::kPackage].value, 0.0);
}

TEST(PowerModelTest, DefaultsAreTheDocumentedOnes) {
  auto m = PowerModel::Create({});
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->options().idle_per_core.value, 0.74);
  EXPECT_DOUBLE_EQ(m->options().max_per_core.value, 3.5);
}

TEST(PowerModelTest, RejectsNonsense) {
  EXPECT_FALSE(PowerModel::Create({Watts{5.0}, Watts{1.0}}));
  EXPECT_FALSE(PowerModel::Create({Watts{-1.0}, Watts{1.0}}));
  auto bad = PowerModel::Create({Watts{0.0}, Watts{std::numeric_limits<double>::infinity()}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), junction::ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace energy
