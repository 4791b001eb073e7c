// spinlock.h — a test-and-test-and-set spinlock for the runtime's short critical sections.
//
// Held only for a few instructions (queue and wait-list edits), never across a switch, except
// that ParkAndUnlock() releases it after the parking uthread is off its stack. Each lock lives
// inside the object it protects, so it is shared only by the uthreads using that object.
#pragma once

#include <atomic>

#include <immintrin.h>

namespace junction::sched {

class Spinlock {
 public:
  void lock() {
    while (true) {
      if (!held_.exchange(true, std::memory_order_acquire)) return;
      while (held_.load(std::memory_order_relaxed)) _mm_pause();
    }
  }
  bool try_lock() {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace junction::sched
