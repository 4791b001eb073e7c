// io_waiter_test.cc — the kernel backend's readiness waiter: no lost wake-up, deadlines, one
// waiter at a time, and short-lived waiters racing a notifier on another core.
#include "junction/net/io_waiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>

#include "junction/sched/core_hooks.h"
#include "junction/sched/runtime_config.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"
#include "junction/sched/test_util.h"

namespace junction::net {
namespace {

using namespace std::chrono_literals;
using sched::Clock;

TEST(IoWaiterTest, ReturnsAtOnceWhenTheEpochAlreadyMoved) {
  sched::testing::RunOnCores(1, [] {
    IoWaiter w;
    const std::uint64_t seen = w.epoch();
    w.Notify();  // the edge lands between the failed call and the wait
    EXPECT_EQ(w.Wait(seen, Clock::now() + 10s), IoWaiter::kReady);
  });
}

TEST(IoWaiterTest, TimesOutWithoutAnEdge) {
  sched::testing::RunOnCores(1, [] {
    IoWaiter w;
    const auto t0 = Clock::now();
    EXPECT_EQ(w.Wait(w.epoch(), t0 + 20ms), IoWaiter::kTimedOut);
    EXPECT_GE(Clock::now() - t0, 20ms);
  });
}

TEST(IoWaiterTest, NotifyFromAnotherCoreWakesTheWaiter) {
  sched::testing::RunOnCores(2, [] {
    IoWaiter w;
    const std::uint64_t seen = w.epoch();
    auto h = sched::Spawn(
        [&] {
          sched::SleepFor(5ms);
          w.Notify();
        },
        {.core = 1, .stealable = false});
    const auto t0 = Clock::now();
    EXPECT_EQ(w.Wait(seen, Clock::now() + 10s), IoWaiter::kReady);
    EXPECT_LT(Clock::now() - t0, 5s);
    h->Join();
  });
}

// Notify from a poll hook of the waiter's own core, the dpdk stack's case: with park polling
// the waiter runs the hook itself (Notify's same-kthread path, no exchange); without it the idle
// loop runs the hook (the general path); every 50th round the edge comes from another uthread
// of the same core after a sleep (the general path too: the waiter is parked, not running).
// Every round ends ready, well within its deadline, and leaves the slot free for the next.
TEST(IoWaiterTest, AHookOnTheWaitersOwnCoreWakesItRoundAfterRound) {
  for (std::uint32_t park_poll_us : {10u, 0u}) {
    sched::RuntimeConfig c;
    c.cores = sched::testing::FirstCpus(1);
    c.park_poll_us = park_poll_us;
    sched::testing::RunIn(c, [park_poll_us] {
      struct Edge {
        IoWaiter w;
        std::atomic<int> passes_left{-1};  // 0: the next hook pass notifies; -1: none
      };
      auto e = std::make_shared<Edge>();
      sched::AddPollHook([e] {
        const int left = e->passes_left.load(std::memory_order_relaxed);
        if (left > 0) {
          e->passes_left.store(left - 1, std::memory_order_relaxed);
        } else if (left == 0) {
          e->passes_left.store(-1, std::memory_order_relaxed);
          e->w.Notify();
        }
      });
      for (int i = 0; i < 2000; ++i) {
        const std::uint64_t seen = e->w.epoch();
        std::optional<sched::JoinHandle> other;
        if (i % 50 == 0) {
          auto h = sched::Spawn([e] {
            sched::SleepFor(50us);
            e->w.Notify();
          });
          ASSERT_TRUE(h.has_value());
          other.emplace(std::move(*h));
        } else {
          // On the first hook pass after the waiter parks: an idle core runs at least that one
          // pass before it may block (a count of passes could outlast its spin on a slow or
          // preempted run, and then no pass comes until the deadline).
          e->passes_left.store(0, std::memory_order_relaxed);
        }
        const auto t0 = Clock::now();
        ASSERT_EQ(e->w.Wait(seen, t0 + 5s), IoWaiter::kReady)
            << "round " << i << ", park_poll_us " << park_poll_us;
        ASSERT_LT(Clock::now() - t0, 1s) << "round " << i;
        if (other) other->Join();
      }
      EXPECT_EQ(e->w.Wait(e->w.epoch(), Clock::now() + 1ms), IoWaiter::kTimedOut);  // slot free
    });
  }
}

TEST(IoWaiterTest, SecondWaiterIsBusy) {
  sched::testing::RunOnCores(1, [] {
    IoWaiter w;
    const std::uint64_t seen = w.epoch();
    auto first =
        sched::Spawn([&] { EXPECT_EQ(w.Wait(seen, Clock::now() + 10s), IoWaiter::kReady); });
    sched::Yield();  // let it park
    EXPECT_EQ(w.Wait(seen, Clock::now() + 10s), IoWaiter::kBusy);
    w.Notify();
    first->Join();
  });
}

// Thousands of waiters with deadlines of a few microseconds, each exiting right after its
// wait, while a notifier on the other core hammers Notify: every wait ends (no lost or stuck
// wake-up) and no notifier touches a waiter after it has left.
TEST(IoWaiterTest, ShortLivedWaitersRaceANotifier) {
  sched::testing::RunOnCores(2, [] {
    IoWaiter w;
    std::atomic<bool> stop{false};
    auto notifier = sched::Spawn(
        [&] {
          while (!stop.load(std::memory_order_relaxed)) {
            w.Notify();
            sched::Yield();
          }
        },
        {.core = 1, .stealable = false});
    std::atomic<int> ready{0}, timed_out{0};
    const auto end = Clock::now() + 3s;
    for (int i = 0; i < 5000 && Clock::now() < end; ++i) {
      auto h = sched::Spawn(
          [&, i] {
            const std::uint64_t seen = w.epoch();
            switch (w.Wait(seen, Clock::now() + std::chrono::microseconds(i % 20))) {
              case IoWaiter::kReady:
                ready.fetch_add(1);
                break;
              case IoWaiter::kTimedOut:
                timed_out.fetch_add(1);
                break;
              case IoWaiter::kBusy:
                ADD_FAILURE() << "only one waiter at a time here";
                break;
            }
          },
          {.core = 0, .stealable = false});
      h->Join();
    }
    stop.store(true);
    notifier->Join();
    EXPECT_GT(ready.load() + timed_out.load(), 0);
  });
}

}  // namespace
}  // namespace junction::net
