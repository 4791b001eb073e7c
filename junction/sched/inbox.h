// inbox.h — a core's remote wake-up inbox: an intrusive multi-producer single-consumer queue.
//
// Any thread (another core, a kthread outside the runtime) pushes with one atomic exchange;
// only the owning core pops. There is no lock: a producer stalled between its exchange and its
// link store makes the queue look momentarily empty to the consumer (Pop returns nullptr) while
// MaybeNonEmpty() stays true, so the owner never blocks with a wake-up in flight.
// (Dmitry Vyukov's intrusive MPSC node-based queue.)
#pragma once

#include <atomic>

#include "junction/sched/thread.h"

namespace junction::sched {

class Inbox {
 public:
  Inbox() : head_(&stub_), tail_(&stub_) {}

  // Any thread. Wait-free. seq_cst, so that a producer that then reads the owner's
  // "sleeping" flag and an owner that set it and then checks MaybeNonEmpty() cannot both
  // miss each other.
  void Push(detail::Thread* t) {
    t->mpsc_next.store(nullptr, std::memory_order_relaxed);
    detail::Thread* prev = head_.exchange(t, std::memory_order_seq_cst);
    prev->mpsc_next.store(t, std::memory_order_release);
  }

  // Owner only.
  bool MaybeNonEmpty() const { return head_.load(std::memory_order_seq_cst) != tail_; }

  // Owner only. nullptr when empty or when a push is half-done.
  detail::Thread* Pop() {
    detail::Thread* tail = tail_;
    detail::Thread* next = tail->mpsc_next.load(std::memory_order_acquire);
    if (tail == &stub_) {
      if (next == nullptr) return nullptr;
      tail_ = next;
      tail = next;
      next = next->mpsc_next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    if (tail != head_.load(std::memory_order_acquire)) return nullptr;  // push in progress
    Push(&stub_);
    next = tail->mpsc_next.load(std::memory_order_acquire);
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    return nullptr;
  }

 private:
  alignas(64) std::atomic<detail::Thread*> head_;
  alignas(64) detail::Thread* tail_;
  detail::Thread stub_;
};

}  // namespace junction::sched
