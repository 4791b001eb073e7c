// burn_test.cc — the cpu-burn load is pinned (known states) and composes across batches.
#include "burn.h"

#include <gtest/gtest.h>

namespace faasnode::functions {
namespace {

// Values from an independent Python model of the same loop; they pin the load: a change to
// the step, the seed or the steps per round changes them.
TEST(BurnTest, KnownStates) {
  EXPECT_EQ(BurnRounds(0), 0x9e3779b97f4a7c15u);
  EXPECT_EQ(BurnRounds(1), 0xc8025c367c3730d8u);
  EXPECT_EQ(BurnRounds(1000), 0x018ef286af4a4a0du);
  static_assert(BurnRounds(1) == 0xc8025c367c3730d8u, "constexpr agrees");
}

TEST(BurnTest, BatchesCompose) {
  for (std::uint64_t a : {0u, 1u, 7u, 500u}) {
    EXPECT_EQ(BurnRounds(a + 13), BurnRounds(13, BurnRounds(a))) << a;
  }
  std::uint64_t s = kBurnSeed;
  for (int i = 0; i < 1000; ++i) {
    s = BurnRounds(1, s);
    ASSERT_NE(s, 0u);
  }
  EXPECT_EQ(s, BurnRounds(1000));
}

}  // namespace
}  // namespace faasnode::functions
