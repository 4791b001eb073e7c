// accounting_test.cc — every cycle of every core lands in exactly one account and interval.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "junction/sched/core.h"  // CoreCounters
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"
#include "junction/sched/test_util.h"
#include "junction/sched/tsc.h"

namespace junction::sched {
namespace {
using namespace std::chrono_literals;
using testing::FirstCpus;
using testing::RunDelayNs;

void CheckCloses(const IntervalSnapshot& s, std::map<int, std::uint64_t>* last_end) {
  for (const CoreInterval& c : s.cores) {
    const std::uint64_t sum = c.busy_total() + c.overhead() + c.idle;
    ASSERT_EQ(sum, c.elapsed()) << "core " << c.core << " interval " << s.seq
                                << ": accounts do not add up to the interval";
    auto it = last_end->find(c.core);
    if (it != last_end->end()) {
      ASSERT_EQ(c.tsc_begin, it->second) << "core " << c.core << ": a gap between intervals";
    }
    (*last_end)[c.core] = c.tsc_end;
  }
}

// Closes an interval into `snaps`; false (and a test failure) when CloseInterval fails.
bool CloseInto(Runtime* r, std::vector<IntervalSnapshot>& snaps) {
  auto s = r->CloseInterval();
  if (!s) {
    ADD_FAILURE() << s.error().message();
    return false;
  }
  snaps.push_back(std::move(*s));
  return true;
}

// CheckCloses over a run's snapshots, in order; returns the cycles of user accounts and of idle.
std::pair<std::uint64_t, std::uint64_t> CheckAllCloses(const std::vector<IntervalSnapshot>& snaps) {
  std::map<int, std::uint64_t> last_end;
  std::uint64_t user = 0, idle = 0;
  for (const auto& s : snaps) {
    CheckCloses(s, &last_end);
    for (const auto& c : s.cores) {
      idle += c.idle;
      for (const auto& a : c.busy) {
        if (a.account >= accounts::kFirstUser) user += a.cycles;
      }
    }
  }
  return {user, idle};
}

TEST(Accounting, IntervalsCloseExactlyUnderMixedLoad) {
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(2)});
  ASSERT_TRUE(rt.has_value());
  Runtime* r = rt->get();
  std::atomic<bool> stop{false};
  std::vector<IntervalSnapshot> snaps;
  std::thread sampler;
  std::atomic<bool> sampler_done{false};
  ASSERT_TRUE(r->Run([&] {
    sampler = std::thread([&] {
      while (!stop.load()) {
        std::this_thread::sleep_for(3ms);
        auto s = r->CloseInterval();
        ASSERT_TRUE(s.has_value()) << s.error().message();
        snaps.push_back(std::move(*s));
      }
      sampler_done.store(true);
    });
    Mutex mu;
    std::vector<JoinHandle> hs;
    for (int t = 0; t < 16; ++t) {
      hs.push_back(*Spawn([&, t] {
        for (int i = 0; i < 300; ++i) {
          const auto until = Clock::now() + std::chrono::microseconds(20 + 10 * t);
          while (Clock::now() < until) {
          }
          if (i % 3 == 0) SleepFor(200us);
          std::lock_guard<Mutex> l(mu);
          Yield();
        }
      }, {.account = accounts::kFirstUser + static_cast<AccountId>(t)}));
    }
    for (auto& h : hs) h.Join();
    SleepFor(20ms);  // some idle at the end
    stop.store(true);
    while (!sampler_done.load()) SleepFor(1ms);  // never block this core's kthread
    sampler.join();
  }).has_value());
  ASSERT_GT(snaps.size(), 20u);
  const auto [user, idle] = CheckAllCloses(snaps);
  EXPECT_GT(user, 0u);
  EXPECT_GT(idle, 0u);
}

// The close gate under a race: cores that block and wake thousands of times a second (short
// sleeps, idle gaps) while a closer asks for an interval every ~100 us, so closes land in every
// phase of a core's block (before the gate opens, while it is open, as the core takes it
// back). Every interval still adds up exactly and follows the last, and every cycle burned
// under a user account is charged to it.
TEST(Accounting, ClosesRacingBlockingCoresStayExact) {
  // No spinning before a block or a timer: every sleep below blocks the core.
  RuntimeConfig config{.cores = FirstCpus(2)};
  config.idle_spin_us = 0;
  config.timer_spin_us = 0;
  auto rt = Runtime::Create(config);
  ASSERT_TRUE(rt.has_value()) << rt.error().message();
  Runtime* r = rt->get();
  std::vector<IntervalSnapshot> snaps;
  std::atomic<bool> stop{false}, closer_done{false};
  std::atomic<std::uint64_t> burned{0};
  std::thread closer;
  ASSERT_TRUE(r->Run([&] {
    closer = std::thread([&] {
      while (!stop.load()) {
        std::this_thread::sleep_for(100us);
        if (!CloseInto(r, snaps)) break;
      }
      closer_done.store(true);
    });
    std::vector<JoinHandle> hs;
    for (int t = 0; t < 4; ++t) {
      hs.push_back(*Spawn([&, t] {
        std::uint64_t mine = 0;
        for (int i = 0; i < 3000; ++i) {
          const std::uint64_t t0 = Rdtsc();
          while (Rdtsc() - t0 < NsToCycles(2000.0 + 1000.0 * t)) {
          }
          mine += Rdtsc() - t0;
          SleepFor(std::chrono::microseconds(30 + 20 * (i % 5)));  // the core blocks, or nearly
        }
        burned.fetch_add(mine);
      }, {.account = accounts::kFirstUser + static_cast<AccountId>(t)}));
    }
    for (auto& h : hs) h.Join();
    stop.store(true);
    while (!closer_done.load()) SleepFor(1ms);  // never block this core's kthread
    closer.join();
  }).has_value());
  ASSERT_GT(snaps.size(), 200u);
  const auto [user, idle] = CheckAllCloses(snaps);
  // The last stretch after the final close is in no snapshot: the burn must be mostly there.
  EXPECT_GT(user, burned.load() * 9 / 10) << "user cycles charged " << user << " of " << burned.load() << " burned";
  EXPECT_GT(idle, 0u);
  std::uint64_t blocks = 0;
  for (int c = 0; c < r->num_cores(); ++c) blocks += r->counters(c).blocks;
  std::printf("%zu closes, %llu blocks of the cores\n", snaps.size(), static_cast<unsigned long long>(blocks));
  EXPECT_GT(blocks, 1000u) << "the cores hardly blocked: the race this test is for did not happen";
}

// The TSC keeps counting while the kernel runs another process on this CPU, and that time is
// charged to whichever uthread was running. So the bound on what an account is overcharged is
// the switch path (well under 1%) plus the time the worker kthread waited for its CPU, which
// schedstat measures; the 1:3 shares are checked when that wait was negligible.
TEST(Accounting, AKnownBurnIsChargedToItsAccount) {
  constexpr AccountId kA = 1000, kB = 2000;
  bool shares_checked = false;
  std::vector<std::string> clean_attempts;  // attempts with no CPU wait: what they charged
  for (int attempt = 0; attempt < 5 && !shares_checked; ++attempt) {
    auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(1)});
    ASSERT_TRUE(rt.has_value());
    Runtime* r = rt->get();
    std::uint64_t burned_a = 0, burned_b = 0, charged_a = 0, charged_b = 0, waited = 0;
    ASSERT_TRUE(r->Run([&] {
      ASSERT_TRUE(r->CloseInterval().has_value());  // start from a clean interval
      const long long d0 = RunDelayNs();
      auto burn = [](std::uint64_t cycles) {
        const std::uint64_t t0 = Rdtsc();
        while (Rdtsc() - t0 < cycles) {
        }
      };
      const std::uint64_t unit = NsToCycles(1e6);  // 1 ms
      auto a = *Spawn([&] { for (int i = 0; i < 5; ++i) { burn(unit); burned_a += unit; Yield(); } }, {.account = kA});
      auto b = *Spawn([&] { for (int i = 0; i < 15; ++i) { burn(unit); burned_b += unit; Yield(); } }, {.account = kB});
      a.Join();
      b.Join();
      auto s = r->CloseInterval();
      waited = NsToCycles(static_cast<double>(RunDelayNs() - d0));
      ASSERT_TRUE(s.has_value());
      const CoreInterval& c = s->cores[0];
      ASSERT_EQ(c.busy_total() + c.overhead() + c.idle, c.elapsed());
      for (const auto& acc : c.busy) {
        if (acc.account == kA) charged_a = acc.cycles;
        if (acc.account == kB) charged_b = acc.cycles;
      }
    }).has_value());
    // Nothing burned goes unbilled, and nothing beyond the switch path and the CPU wait.
    ASSERT_GE(charged_a, burned_a);
    ASSERT_GE(charged_b, burned_b);
    const std::uint64_t burned = burned_a + burned_b;
    if (waited > burned / 200) continue;  // noticeably preempted: the shares would be skewed
    // A host that deschedules the vCPU itself stops the guest without schedstat seeing it (the
    // TSC runs on; seen here: 58 us inside one 5 ms burn). That cannot repeat in every attempt;
    // an accounting error would: the shares must hold in one clean attempt.
    const double ratio = static_cast<double>(charged_b) / static_cast<double>(charged_a);
    // Overcharged by no more than the switch path (well under 1%) and the CPU wait.
    const bool ok = charged_a + charged_b <= burned + burned / 100 + waited &&
                    charged_a < burned_a + burned_a / 100 && charged_b < burned_b + burned_b / 100 &&
                    std::abs(ratio - 3.0) <= 0.03;
    clean_attempts.push_back(fmt::format("charged/burned A {:.4f}, B {:.4f}, B:A {:.4f}",
                                         static_cast<double>(charged_a) / burned_a,
                                         static_cast<double>(charged_b) / burned_b, ratio));
    if (ok) shares_checked = true;
  }
  if (!shares_checked && !clean_attempts.empty()) {
    std::string all;
    for (const auto& f : clean_attempts) all += "\n  " + f;
    ADD_FAILURE() << "no attempt charged within 1% of the burn with 1:3 shares:" << all;
  } else if (!shares_checked) {
    std::printf("the worker kthread waited for its CPU in every attempt: only the bounds were checked\n");
  }
}

// SetAccountAt switches as of the caller's own TSC reading: the account gets exactly the cycles
// from that reading to the next switch (what the invoke handler's estimate counts), and a
// reading older than the current segment (a switch came in between) charges nothing backwards.
TEST(Accounting, SetAccountAtChargesFromTheGivenReading) {
  constexpr AccountId kCall = 7000, kStale = 7001;
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(1)});
  ASSERT_TRUE(rt.has_value());
  Runtime* r = rt->get();
  ASSERT_TRUE(r->Run([&] {
    ASSERT_TRUE(r->CloseInterval().has_value());
    const AccountId before = CurrentAccount();
    const std::uint64_t t0 = Rdtsc();
    SetAccountAt(kCall, t0);
    while (Rdtsc() - t0 < NsToCycles(2e5)) {  // 0.2 ms
    }
    const std::uint64_t t1 = Rdtsc();
    SetAccountAt(before, t1);
    // A stale reading: before the segment that SetAccountAt(before, t1) started.
    SetAccountAt(kStale, t0);
    SetAccountAt(before, Rdtsc());
    auto s = r->CloseInterval();
    ASSERT_TRUE(s.has_value());
    std::map<int, std::uint64_t> last_end;
    CheckCloses(*s, &last_end);
    std::uint64_t call = 0, stale = 0;
    for (const auto& a : s->cores[0].busy) {
      if (a.account == kCall) call += a.cycles;
      if (a.account == kStale) stale += a.cycles;
    }
    EXPECT_EQ(call, t1 - t0) << "the call account must hold exactly [t0, t1)";
    EXPECT_LT(stale, NsToCycles(1e5)) << "a stale reading must not charge the time before the segment";
  }).has_value());
}

// An idle node's sampler closes an interval every 10 ms: a core blocked idle must be closed
// without a wake-up each time (before, every close kicked it awake), and its intervals must
// still add up and follow one another with no gap.
TEST(Accounting, AnIdleCoreIsClosedWithoutWakingIt) {
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(1)});
  ASSERT_TRUE(rt.has_value());
  Runtime* r = rt->get();
  constexpr int kCloses = 20;
  std::vector<IntervalSnapshot> snaps;
  std::uint64_t wakes = 0;
  std::atomic<bool> done{false};
  std::thread sampler;
  ASSERT_TRUE(r->Run([&] {
    sampler = std::thread([&] {
      std::this_thread::sleep_for(50ms);  // the core has blocked by then
      const std::uint64_t blocks0 = r->counters(0).blocks;
      for (int i = 0; i < kCloses; ++i) {
        std::this_thread::sleep_for(5ms);
        if (!CloseInto(r, snaps)) break;
      }
      wakes = r->counters(0).blocks - blocks0;
      done.store(true);
    });
    // The core blocks until this uthread's next timer, 50 ms away each time.
    while (!done.load()) SleepFor(50ms);
  }).has_value());
  sampler.join();
  ASSERT_EQ(snaps.size(), static_cast<std::size_t>(kCloses));
  std::map<int, std::uint64_t> last_end;
  for (const IntervalSnapshot& s : snaps) {
    CheckCloses(s, &last_end);
    // Nothing ran: the interval is the core's idle time, bar the timer's wake-ups.
    EXPECT_GT(s.cores[0].idle, s.cores[0].elapsed() / 2) << "interval " << s.seq;
  }
  // The uthread's timer wakes the core every 50 ms (about 2-3 times over the closes); a kick
  // per close would be 20 or more.
  EXPECT_LE(wakes, static_cast<std::uint64_t>(kCloses / 2))
      << "the core was woken to close intervals it could have had closed for it";
}

TEST(Accounting, CloseIntervalReportsARuntimeThatIsNotRunning) {
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(1)});
  ASSERT_TRUE(rt.has_value());
  auto s = (*rt)->CloseInterval();
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace junction::sched
