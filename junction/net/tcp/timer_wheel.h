// timer_wheel.h — a core's TCP timers: a hashed wheel of 1 ms slots with intrusive nodes.
//
// One node per connection, armed at the earliest of its timers (the connection recomputes it
// after every event). Arm and cancel are O(1) and allocate nothing (Rearm and Disarm, their
// lazy forms, mostly only store the new deadline); Advance visits the slots
// of the ticks that passed and fires every node whose deadline came. A deadline more than one
// turn of the wheel away sits in its slot and is skipped until its turn comes. Owner core only.
#pragma once

#include <cstdint>
#include <vector>

namespace junction::net::tcp {

struct TimerNode {
  TimerNode* prev = nullptr;
  TimerNode* next = nullptr;
  std::int64_t deadline_ns = INT64_MAX;
  std::int64_t slot_tick = 0;  // the tick of the slot it is linked in (when armed)
  bool armed() const { return prev != nullptr; }
};

class TimerWheel {
 public:
  static constexpr std::int64_t kTickNs = 1'000'000;
  static constexpr std::size_t kSlots = 1024;

  explicit TimerWheel(std::int64_t now_ns)
      : slots_(kSlots), last_tick_(now_ns / kTickNs), next_tick_ns_((last_tick_ + 1) * kTickNs) {
    for (auto& s : slots_) s.prev = s.next = &s;
  }
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;

  void Arm(TimerNode* n, std::int64_t deadline_ns) {
    if (n->armed()) Cancel(n);
    n->deadline_ns = deadline_ns;
    std::int64_t tick = deadline_ns / kTickNs;
    if (tick <= last_tick_) tick = last_tick_ + 1;  // never in a slot already passed
    n->slot_tick = tick;
    TimerNode& head = slots_[static_cast<std::size_t>(tick) % kSlots];
    n->next = &head;
    n->prev = head.prev;
    head.prev->next = n;
    head.prev = n;
    ++armed_;
  }
  // Arm, lazily: a node whose slot comes no later than the new deadline's only takes the new
  // deadline, and the slot's visit files it further on (Advance's "later turn"). A TCP
  // connection moves its deadline on nearly every segment (the RTO pushed on by each send);
  // most moves go later, and then cost a store instead of an unlink and a link.
  void Rearm(TimerNode* n, std::int64_t deadline_ns) {
    if (n->armed() && n->slot_tick <= deadline_ns / kTickNs) {
      n->deadline_ns = deadline_ns;
      return;
    }
    Arm(n, deadline_ns);
  }
  // Cancel, lazily: the node stays in its slot with no deadline and is dropped when the slot
  // comes (or re-armed by Rearm before then, for free). Until then it counts in armed() and
  // NextDeadlineNs(), which stay lower bounds. A node about to be freed needs Cancel.
  void Disarm(TimerNode* n) {
    if (n->armed()) n->deadline_ns = INT64_MAX;
  }
  void Cancel(TimerNode* n) {
    if (!n->armed()) return;
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = nullptr;
    n->deadline_ns = INT64_MAX;
    --armed_;
  }

  // Calls fire(node) for every node due at now_ns (unlinked before the call; fire may re-arm).
  template <typename F>
  void Advance(std::int64_t now_ns, F&& fire) {
    // Called on every poll pass, nearly always within the tick already visited: a compare,
    // not the 64-bit division (~20-40 cycles) on a pass that a waiting request sits behind.
    if (now_ns < next_tick_ns_) return;
    const std::int64_t now_tick = now_ns / kTickNs;
    if (now_tick <= last_tick_) return;
    std::int64_t from = last_tick_ + 1;
    if (now_tick - from >= static_cast<std::int64_t>(kSlots)) from = now_tick - kSlots + 1;
    last_tick_ = now_tick;
    next_tick_ns_ = (now_tick + 1) * kTickNs;
    for (std::int64_t t = from; t <= now_tick; ++t) {
      TimerNode& head = slots_[static_cast<std::size_t>(t) % kSlots];
      // Move the slot's nodes aside first: fire() may arm nodes into this very slot.
      TimerNode pending;
      if (head.next == &head) continue;
      pending.next = head.next;
      pending.prev = head.prev;
      pending.next->prev = &pending;
      pending.prev->next = &pending;
      head.prev = head.next = &head;
      while (pending.next != &pending) {
        TimerNode* n = pending.next;
        n->prev->next = n->next;
        n->next->prev = n->prev;
        n->prev = n->next = nullptr;
        --armed_;
        if (n->deadline_ns == INT64_MAX) continue;  // disarmed (Disarm)
        if (n->deadline_ns <= now_ns) {
          n->deadline_ns = INT64_MAX;
          fire(n);
        } else {
          Arm(n, n->deadline_ns);  // a later turn of the wheel
        }
      }
    }
  }

  // A lower bound on the earliest armed deadline (INT64_MAX when none): the start of the
  // first non-empty slot ahead. At most kSlots emptiness checks: for an idle core deciding how
  // long it may sleep, not for every poll.
  std::int64_t NextDeadlineNs() const {
    if (armed_ == 0) return INT64_MAX;
    for (std::int64_t t = last_tick_ + 1; t <= last_tick_ + static_cast<std::int64_t>(kSlots); ++t) {
      const TimerNode& head = slots_[static_cast<std::size_t>(t) % kSlots];
      if (head.next != &head) return t * kTickNs;
    }
    return (last_tick_ + 1) * kTickNs;
  }

  std::size_t armed() const { return armed_; }
  std::int64_t last_tick_ns() const { return last_tick_ * kTickNs; }

 private:
  std::vector<TimerNode> slots_;  // sentinels
  std::int64_t last_tick_;
  std::int64_t next_tick_ns_;  // the start of the tick after last_tick_
  std::size_t armed_ = 0;
};

}  // namespace junction::net::tcp
