// io_waiter.h — one direction's readiness of a kernel socket: an epoch the poller bumps and
// the one uthread parked on it.
//
// The poller (a core's idle context) calls Notify() on every readiness edge; a uthread that got
// EAGAIN waits for the epoch to move past the value it read *before* its failed system call,
// so an edge that lands between the call and the wait is never lost:
//
//   for (;;) {
//     std::uint64_t seen = rd.epoch();
//     ssize_t n = recv(fd, ...);
//     if (n >= 0 || errno != EAGAIN) return ...;
//     if (auto w = rd.Wait(seen, deadline); w != IoWaiter::kReady) return ...;
//   }
//
// At most one uthread waits at a time (kBusy for a second). Notify is called by one thread at
// a time (the poller of the core the socket is registered on), from any core or kthread; two
// concurrent notifiers could both move the epoch to the same value (see Notify). No
// allocation, no locks: the waiter records itself in an atomic, re-checks the epoch, and parks with
// ParkUntil in a loop (spurious wake-ups are re-checked).
#pragma once

#include <atomic>
#include <cstdint>

#include "junction/sched/sched.h"

namespace junction::net {

class IoWaiter {
 public:
  enum Result { kReady, kTimedOut, kBusy };

  std::uint64_t epoch() const { return epoch_.load(std::memory_order_seq_cst); }

  // From a uthread: parks until epoch() != seen or the deadline. Never returns kReady
  // without the epoch having moved.
  Result Wait(std::uint64_t seen, sched::Deadline deadline) {
    sched::ThreadRef self = sched::Self();
    sched::ThreadRef expected = nullptr;
    if (!waiter_.compare_exchange_strong(expected, self, std::memory_order_seq_cst)) {
      return kBusy;
    }
    Result r = kReady;
    while (epoch_.load(std::memory_order_seq_cst) == seen) {
      if (!sched::ParkUntil(deadline)) {
        if (epoch_.load(std::memory_order_seq_cst) == seen) r = kTimedOut;
        break;
      }
    }
    // Woken by a Notify, the slot is already empty: a load tells it without the locked
    // exchange (one fewer on every wake-up's path); only a slot still holding us needs it.
    if (waiter_.load(std::memory_order_acquire) == nullptr ||
        waiter_.exchange(nullptr, std::memory_order_seq_cst) != self) {
      // A Notify took us out of waiter_ and may still be inside Unpark(self). Our thread
      // block must stay valid until it is done: wait for it (a few hundred ns) before we
      // return and possibly exit. The permit it leaves is a spurious wake-up for a later
      // Park, which every caller of Park tolerates.
      while (waking_.load(std::memory_order_acquire)) sched::Yield();
    }
    return r;
  }

  // One notifier at a time (see above): a readiness edge. Wakes the waiter, if any.
  //
  // None when the waiter is polling in place on this kthread (below); otherwise one locked
  // instruction, the exchange: with a single notifier the epoch needs no atomic
  // increment, and the exchange is the full fence between the epoch's store and the look at
  // waiter_ that a waiter's compare-exchange pairs with (either the exchange takes the waiter,
  // or the waiter's exchange comes after it and its load of the epoch sees the new value).
  // waking_ is set before the exchange publishes the empty slot: a waiter that sees the slot
  // empty (acquire) sees waking_ set as well. A locked increment and a locked store before
  // the exchange cost ~12 ns on every wake-up of a dpdk round trip.
  void Notify() {
    epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    // The waiter is the uthread running on this kthread: it is polling in place while it
    // parks and one of its poll hooks called this. It registered itself on this kthread, no
    // other thread can take or fill the slot while it holds it (one notifier; a second waiter
    // gets kBusy), and it reads the epoch after this returns, in program order: plain
    // accesses do. The exchange it saves is the first locked instruction after a receive
    // burst, which waits for the burst's stores to the shared ring to drain.
    if (sched::ThreadRef w = waiter_.load(std::memory_order_relaxed);
        w != nullptr && sched::UnparkIfRunningHere(w)) {
      waiter_.store(nullptr, std::memory_order_relaxed);
      return;
    }
    waking_.store(true, std::memory_order_relaxed);
    sched::ThreadRef t = waiter_.exchange(nullptr, std::memory_order_seq_cst);
    if (t != nullptr) sched::Unpark(t);
    waking_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<std::uint64_t> epoch_{0};
  std::atomic<sched::ThreadRef> waiter_{nullptr};
  std::atomic<bool> waking_{false};  // a Notify is between taking waiter_ and leaving Unpark
};

}  // namespace junction::net
