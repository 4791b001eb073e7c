// sync.h — Mutex, CondVar and WaitGroup for uthreads: waiting parks the uthread, never the
// kthread, so its core keeps running other uthreads.
//
// All methods must be called from uthreads. Objects may be shared by uthreads on any cores;
// each object's own spinlock is its only shared word, held for a few instructions.
//
//   Mutex mu; CondVar cv; bool ready = false;
//   Spawn([&] { std::lock_guard l(mu); ready = true; cv.NotifyOne(); });
//   { std::unique_lock l(mu); cv.Wait(l, [&] { return ready; }); }
#pragma once

#include <cstdint>
#include <mutex>

#include "junction/sched/spinlock.h"
#include "junction/sched/tsc.h"
#include "junction/sched/wait_queue.h"

namespace junction::sched {

// Mutual exclusion with FIFO hand-off: Unlock passes ownership straight to the longest
// waiter, so a waiter cannot be starved by barging lockers. Satisfies Lockable.
class Mutex {
 public:
  void lock();
  bool try_lock();
  void unlock();

 private:
  friend class CondVar;
  Spinlock spin_;
  std::atomic<bool> held_{false};
  WaitQueue waiters_{&spin_};
};

class CondVar {
 public:
  // Atomically releases `lock` and parks; re-acquires it before returning. May wake spuriously.
  void Wait(std::unique_lock<Mutex>& lock);
  template <typename Pred>
  void Wait(std::unique_lock<Mutex>& lock, Pred pred) {
    while (!pred()) Wait(lock);
  }
  // false when the deadline passed before a notification.
  bool WaitUntil(std::unique_lock<Mutex>& lock, Deadline deadline);
  template <typename Pred>
  bool WaitUntil(std::unique_lock<Mutex>& lock, Deadline deadline, Pred pred) {
    while (!pred()) {
      if (!WaitUntil(lock, deadline)) return pred();
    }
    return true;
  }
  void NotifyOne();
  void NotifyAll();

 private:
  bool WaitNs(std::unique_lock<Mutex>& lock, std::int64_t deadline_ns);
  Spinlock spin_;
  WaitQueue waiters_{&spin_};
};

// Waits for a set of uthreads to finish: Add before spawning, Done in each, Wait to join all.
class WaitGroup {
 public:
  void Add(std::int64_t n = 1);
  void Done() { Add(-1); }
  void Wait();
  bool WaitUntil(Deadline deadline);

 private:
  Spinlock spin_;
  std::int64_t count_ = 0;
  WaitQueue waiters_{&spin_};
};

}  // namespace junction::sched
