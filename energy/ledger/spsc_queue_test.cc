// spsc_queue_test.cc — the SPSC ring: bounds, order, and a two-thread stress run.
#include "energy/ledger/spsc_queue.h"

#include <thread>

#include <gtest/gtest.h>

namespace energy {
namespace {

TEST(SpscQueueTest, BoundedFifo) {
  SpscQueue<int> q(5);  // rounded up to 8
  EXPECT_EQ(q.capacity(), 8u);
  int out = -1;
  EXPECT_FALSE(q.TryPop(&out));
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(q.TryPush(i));
  EXPECT_FALSE(q.TryPush(99));
  EXPECT_EQ(q.ApproxSize(), 8u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.TryPop(&out));
    EXPECT_EQ(out, i);
  }
  EXPECT_TRUE(q.TryPush(8));
  for (int i = 3; i <= 8; ++i) {
    ASSERT_TRUE(q.TryPop(&out));
    EXPECT_EQ(out, i);
  }
  EXPECT_FALSE(q.TryPop(&out));
}

TEST(SpscQueueTest, TwoThreadsKeepOrderAndLoseNothing) {
  constexpr uint64_t kN = 2'000'000;
  SpscQueue<uint64_t> q(1024);
  std::thread producer([&] {
    for (uint64_t i = 0; i < kN; ++i) {
      while (!q.TryPush(i)) std::this_thread::yield();
    }
  });
  uint64_t expect = 0, v = 0;
  while (expect < kN) {
    if (q.TryPop(&v)) {
      ASSERT_EQ(v, expect);
      ++expect;
    } else {
      std::this_thread::yield();
    }
  }
  producer.join();
  EXPECT_FALSE(q.TryPop(&v));
}

}  // namespace
}  // namespace energy
