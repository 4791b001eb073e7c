// wait_queue.h — a FIFO of parked uthreads guarded by its owner's Spinlock, with timeouts.
//
// The building block of Mutex, CondVar, WaitGroup and Channel. The owner object holds the
// spinlock while it inspects its state and calls Wait() or PopWaiter(); a waiting uthread
// gives up its core, never its kthread. Exactly one of {a waker's PopWaiter, the timer} wins
// a waiter (they race on Thread::wait_token), so a wake-up is never lost or doubled.
#pragma once

#include <cstdint>

#include "junction/sched/spinlock.h"
#include "junction/sched/thread.h"
#include "junction/sched/tsc.h"

namespace junction::sched {

// Makes a blocked thread runnable on its home core. Any thread may call it (core.cc).
void Ready(detail::Thread* t);

class WaitQueue {
 public:
  explicit WaitQueue(Spinlock* lock) : lock_(lock) {}
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  // Caller is a uthread holding the lock. Parks until popped by a waker or until the
  // deadline (ns on the steady clock; INT64_MAX for none). Returns with the lock NOT held;
  // false when the deadline passed.
  bool Wait(std::int64_t deadline_ns = INT64_MAX);

  // Caller holds the lock. Unlinks the first waiter that no timer has claimed and returns it;
  // the caller must Ready() it (preferably after unlocking). nullptr when none.
  detail::Thread* PopWaiter();

  // Caller holds the lock. Unlinks every unclaimed waiter into a list through Thread::next;
  // pass the head to ReadyAll() after unlocking.
  detail::Thread* PopAll();
  static void ReadyAll(detail::Thread* list);

  bool empty() const { return head_ == nullptr; }

 private:
  static void OnTimeout(detail::Thread* t);
  void Link(detail::Thread* t);
  void Unlink(detail::Thread* t);

  Spinlock* lock_;
  detail::Thread* head_ = nullptr;
  detail::Thread* tail_ = nullptr;
};

inline std::int64_t DeadlineNs(Deadline d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d.time_since_epoch()).count();
}

}  // namespace junction::sched
