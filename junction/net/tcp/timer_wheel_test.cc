// timer_wheel_test.cc — the wheel's lazy forms: a deadline moved later fires at the new time,
// not the old; one moved earlier is refiled and fires early; a disarmed node never fires and
// leaves the wheel when its slot comes; Cancel is immediate.
#include "junction/net/tcp/timer_wheel.h"

#include <gtest/gtest.h>

#include <vector>

namespace junction::net::tcp {
namespace {

constexpr std::int64_t kMs = 1'000'000;

struct Fired {
  std::vector<std::pair<TimerNode*, std::int64_t>> at;  // node, the wheel's time when fired
};

void Step(TimerWheel& w, std::int64_t& now, std::int64_t until, Fired& f) {
  for (; now <= until; now += kMs) {
    w.Advance(now, [&](TimerNode* n) { f.at.emplace_back(n, now); });
  }
}

TEST(TimerWheel, ADeadlineMovedLaterFiresAtTheNewTimeNotTheOld) {
  std::int64_t now = 0;
  TimerWheel w(now);
  TimerNode n;
  w.Arm(&n, 5 * kMs);
  w.Rearm(&n, 40 * kMs);  // later: only the deadline changes
  EXPECT_EQ(n.slot_tick, 5);
  Fired f;
  Step(w, now, 39 * kMs, f);
  EXPECT_TRUE(f.at.empty());
  EXPECT_TRUE(n.armed());  // refiled when slot 5 came
  EXPECT_EQ(n.slot_tick, 40);
  Step(w, now, 41 * kMs, f);
  ASSERT_EQ(f.at.size(), 1u);
  EXPECT_EQ(f.at[0].second, 40 * kMs);
  EXPECT_EQ(w.armed(), 0u);
}

TEST(TimerWheel, ADeadlineMovedEarlierIsRefiledAndFiresEarly) {
  std::int64_t now = 0;
  TimerWheel w(now);
  TimerNode n;
  w.Arm(&n, 40 * kMs);
  w.Rearm(&n, 7 * kMs);
  EXPECT_EQ(n.slot_tick, 7);
  Fired f;
  Step(w, now, 50 * kMs, f);
  ASSERT_EQ(f.at.size(), 1u);
  EXPECT_EQ(f.at[0].second, 7 * kMs);
}

TEST(TimerWheel, ADisarmedNodeNeverFiresAndLeavesWhenItsSlotComes) {
  std::int64_t now = 0;
  TimerWheel w(now);
  TimerNode a, b;
  w.Arm(&a, 3 * kMs);
  w.Arm(&b, 3 * kMs);
  w.Disarm(&a);
  EXPECT_EQ(w.armed(), 2u);                    // still filed: a lower bound
  EXPECT_EQ(w.NextDeadlineNs(), 3 * kMs);
  Fired f;
  Step(w, now, 10 * kMs, f);
  ASSERT_EQ(f.at.size(), 1u);
  EXPECT_EQ(f.at[0].first, &b);
  EXPECT_FALSE(a.armed());
  EXPECT_EQ(w.armed(), 0u);
  EXPECT_EQ(w.NextDeadlineNs(), INT64_MAX);
  // Disarmed and then armed again before its slot: the slot's visit fires it on time.
  w.Arm(&a, 20 * kMs);
  w.Disarm(&a);
  w.Rearm(&a, 25 * kMs);
  Step(w, now, 30 * kMs, f);
  ASSERT_EQ(f.at.size(), 2u);
  EXPECT_EQ(f.at[1].first, &a);
  EXPECT_EQ(f.at[1].second, 25 * kMs);
}

TEST(TimerWheel, CancelUnlinksAtOnce) {
  std::int64_t now = 0;
  TimerWheel w(now);
  TimerNode n;
  w.Arm(&n, 3 * kMs);
  w.Rearm(&n, 9 * kMs);
  w.Cancel(&n);  // what a node about to be freed needs: no trace left in any slot
  EXPECT_FALSE(n.armed());
  EXPECT_EQ(w.armed(), 0u);
  Fired f;
  Step(w, now, 20 * kMs, f);
  EXPECT_TRUE(f.at.empty());
}

TEST(TimerWheel, ADeadlineBeyondOneTurnWaitsForItsTurn) {
  std::int64_t now = 0;
  TimerWheel w(now);
  TimerNode n;
  const std::int64_t far = (TimerWheel::kSlots + 5) * kMs;
  w.Arm(&n, 2 * kMs);
  w.Rearm(&n, far);
  Fired f;
  Step(w, now, far + kMs, f);
  ASSERT_EQ(f.at.size(), 1u);
  EXPECT_EQ(f.at[0].second, far);
}

}  // namespace
}  // namespace junction::net::tcp
