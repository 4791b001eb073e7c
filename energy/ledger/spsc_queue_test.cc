// spsc_queue_test.cc — the SPSC ring: bounds, order, and a two-thread stress run.
#include "energy/ledger/spsc_queue.h"

#include <thread>
#include <vector>

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

// TryPushWith fills the slot in place, and a full ring does not call the filler at all.
TEST(SpscQueueTest, PushWithFillsInPlaceAndNotWhenFull) {
  SpscQueue<int> q(2);
  int calls = 0;
  EXPECT_TRUE(q.TryPushWith([&](int& slot) { slot = 10, ++calls; }));
  EXPECT_TRUE(q.TryPushWith([&](int& slot) { slot = 11, ++calls; }));
  EXPECT_FALSE(q.TryPushWith([&](int& slot) { slot = 12, ++calls; }));
  EXPECT_EQ(calls, 2);
  int out = -1;
  ASSERT_TRUE(q.TryPop(&out));
  EXPECT_EQ(out, 10);
  ASSERT_TRUE(q.TryPop(&out));
  EXPECT_EQ(out, 11);
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

TEST(SpscQueueTest, PopAllIntoTakesEverythingInOrderAcrossTheRingsEnd) {
  SpscQueue<int> q(8);
  std::vector<int> out;
  EXPECT_EQ(q.PopAllInto(out), 0u);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(q.TryPush(i));
  int v = -1;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(q.TryPop(&v));  // head at 5: the next run wraps
  for (int i = 6; i < 13; ++i) ASSERT_TRUE(q.TryPush(i));  // 8 queued, slots 5..7 then 0..4
  EXPECT_FALSE(q.TryPush(99));
  out.push_back(-1);  // appended after what is there
  EXPECT_EQ(q.PopAllInto(out), 8u);
  EXPECT_EQ(out, (std::vector<int>{-1, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(q.ApproxSize(), 0u);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(q.TryPush(100 + i));  // every slot free again
}

TEST(SpscQueueTest, PopIntoTakesAtMostItsBoundOldestFirstAcrossTheRingsEnd) {
  SpscQueue<int> q(8);
  std::vector<int> out;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(q.TryPush(i));
  EXPECT_EQ(q.PopInto(out, 5), 5u);  // head at 5
  for (int i = 6; i < 13; ++i) ASSERT_TRUE(q.TryPush(i));  // 8 queued, slots 5..7 then 0..4
  EXPECT_EQ(q.PopInto(out, 4), 4u);  // three before the ring's end, one after
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(q.ApproxSize(), 4u);
  EXPECT_EQ(q.PopInto(out, 0), 0u);
  EXPECT_EQ(q.PopInto(out, 100), 4u);
  EXPECT_EQ(out.back(), 12);
  EXPECT_EQ(q.ApproxSize(), 0u);
}

TEST(SpscQueueTest, PushManyWithFillsTheFreeRoomInPlaceAcrossTheRingsEnd) {
  SpscQueue<int> q(8);
  std::vector<int> out;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(q.TryPush(i));
  ASSERT_EQ(q.PopInto(out, 6), 6u);  // head and tail at 6: two slots before the ring's end
  std::vector<std::pair<size_t, size_t>> runs;  // (first, size) per fill call
  int next = 100;
  const size_t claimed = q.PushManyWith(5, [&](std::span<int> slots, size_t first) {
    runs.emplace_back(first, slots.size());
    for (int& s : slots) s = next++;
  });
  EXPECT_EQ(claimed, 5u);
  EXPECT_EQ(runs, (std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 3}}));
  // Room for 3 more: a claim of 10 gets 3, then none and no fill call.
  EXPECT_EQ(q.PushManyWith(10, [&](std::span<int> slots, size_t) { for (int& s : slots) s = next++; }), 3u);
  int calls = 0;
  EXPECT_EQ(q.PushManyWith(1, [&](std::span<int>, size_t) { ++calls; }), 0u);
  EXPECT_EQ(calls, 0);
  out.clear();
  EXPECT_EQ(q.PopAllInto(out), 8u);
  EXPECT_EQ(out, (std::vector<int>{100, 101, 102, 103, 104, 105, 106, 107}));
}

TEST(SpscQueueTest, ConsumeUpToReadsInPlaceInOrderAndFreesWhatItRead) {
  SpscQueue<int> q(128);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(q.TryPush(i));
  std::vector<int> seen;
  EXPECT_EQ(q.ConsumeUpTo(70, [&](const int& v) { seen.push_back(v); }), 70u);
  EXPECT_EQ(q.ApproxSize(), 30u);
  for (int i = 100; i < 198; ++i) ASSERT_TRUE(q.TryPush(i));  // wraps the ring's end
  EXPECT_FALSE(q.TryPush(-1));                                 // full: 128 queued
  EXPECT_EQ(q.ConsumeUpTo(1000, [&](const int& v) { seen.push_back(v); }), 128u);
  ASSERT_EQ(seen.size(), 198u);
  for (int i = 0; i < 198; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)], i);
  EXPECT_EQ(q.ApproxSize(), 0u);
}

TEST(SpscQueueTest, PopAllIntoAgainstAConcurrentProducerLosesNothing) {
  constexpr uint64_t kN = 1'000'000;
  SpscQueue<uint64_t> q(256);
  std::thread producer([&] {
    for (uint64_t i = 0; i < kN; ++i) {
      while (!q.TryPush(i)) std::this_thread::yield();
    }
  });
  std::vector<uint64_t> got;
  got.reserve(kN);
  while (got.size() < kN) {
    if (q.PopAllInto(got) == 0) std::this_thread::yield();
  }
  producer.join();
  for (uint64_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], i);
}

}  // namespace
}  // namespace energy
