// inbox.h — a core's remote wake-up inbox: an intrusive lock-free stack, drained whole.
//
// Any thread (another core, a kthread outside the runtime) pushes with one CAS on the head;
// only the owning core takes, and it takes everything at once with one exchange, then
// restores arrival order. A push touches one shared cache line (the head) besides the pushed
// thread's own, which matters: a cross-core wake-up costs a few cache-line transfers, and
// this is the one the waker pays. (A node-based MPSC queue touches two: head and the previous
// node.)
#pragma once

#include <atomic>

#include "junction/sched/thread.h"

namespace junction::sched {

class Inbox {
 public:
  // Any thread. Lock-free. seq_cst, so that a pusher that then reads the owner's "sleeping"
  // flag and an owner that set it and then checks MaybeNonEmpty() cannot both miss each other.
  void Push(detail::Thread* t) {
    detail::Thread* head = head_.load(std::memory_order_relaxed);
    do {
      t->mpsc_next.store(head, std::memory_order_relaxed);
    } while (!head_.compare_exchange_weak(head, t, std::memory_order_seq_cst,
                                          std::memory_order_relaxed));
  }

  // Owner only (a hint for anyone else).
  bool MaybeNonEmpty() const { return head_.load(std::memory_order_seq_cst) != nullptr; }

  // Owner only. Every pushed thread, oldest first, linked through mpsc_next; nullptr if none.
  detail::Thread* TakeAll() {
    detail::Thread* list = head_.exchange(nullptr, std::memory_order_acquire);
    detail::Thread* fifo = nullptr;
    while (list != nullptr) {  // the stack is newest first: reverse it
      detail::Thread* next = list->mpsc_next.load(std::memory_order_relaxed);
      list->mpsc_next.store(fifo, std::memory_order_relaxed);
      fifo = list;
      list = next;
    }
    return fifo;
  }

 private:
  alignas(64) std::atomic<detail::Thread*> head_{nullptr};
};

}  // namespace junction::sched
