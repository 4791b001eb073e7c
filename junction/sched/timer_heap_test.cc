// timer_heap_test.cc — the timer heap's order and its sweep of entries whose wait ended.
#include "junction/sched/timer_heap.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace junction::sched {
namespace {

TEST(TimerHeap, PopsInDeadlineOrder) {
  std::vector<std::unique_ptr<detail::Thread>> threads;
  TimerHeap heap;
  const std::int64_t deadlines[] = {50, 10, 40, 30, 20, 60, 5};
  for (std::int64_t d : deadlines) {
    threads.push_back(std::make_unique<detail::Thread>());
    threads.back()->wait_token.store(static_cast<std::uint64_t>(d));
    heap.Arm(d, static_cast<std::uint64_t>(d), threads.back().get());
  }
  std::int64_t last = 0;
  while (!heap.empty()) {
    TimerHeap::Entry e = heap.PopMin();
    EXPECT_LE(last, e.deadline_ns);
    last = e.deadline_ns;
  }
}

// A keep-alive server parks every read with a long deadline and is woken long before it:
// the heap must not keep those dead entries (it held rate x timeout of them before).
TEST(TimerHeap, EntriesWhoseWaitEndedAreSweptAndLiveOnesKept) {
  constexpr int kWaits = 100'000;
  std::vector<std::unique_ptr<detail::Thread>> threads(64);
  for (auto& t : threads) t = std::make_unique<detail::Thread>();
  TimerHeap heap;
  std::uint64_t token = 0;
  std::size_t most = 0;
  // Thread 0 waits all along with the earliest deadline; the others cycle through waits that
  // end at once (their token retired, as ParkUntil does when woken).
  threads[0]->wait_token.store(++token);
  const std::uint64_t live_token = token;
  heap.Arm(1'000, live_token, threads[0].get());
  for (int i = 0; i < kWaits; ++i) {
    detail::Thread* t = threads[1 + i % 63].get();
    t->wait_token.store(++token);
    heap.Arm(60'000'000'000 + i, token, t);
    t->wait_token.store(0);  // woken
    most = std::max(most, heap.size());
  }
  EXPECT_LT(most, 200u) << "dead entries piled up";
  ASSERT_FALSE(heap.empty());
  TimerHeap::Entry first = heap.PopMin();
  EXPECT_EQ(first.token, live_token);
  EXPECT_EQ(first.deadline_ns, 1'000);
  // Whatever else is left is dead (the timer path ignores it) and still in deadline order.
  std::int64_t last = first.deadline_ns;
  while (!heap.empty()) {
    TimerHeap::Entry e = heap.PopMin();
    EXPECT_NE(e.thread->wait_token.load(), e.token);
    EXPECT_LE(last, e.deadline_ns);
    last = e.deadline_ns;
  }
}

}  // namespace
}  // namespace junction::sched
