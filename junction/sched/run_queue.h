// run_queue.h — a core's queue of runnable uthreads: a stealable ring plus owner-only lists.
//
// The owner core pushes and pops; any other core may steal half of the ring (StealHalf)
// without a lock: the ring's head is advanced by CAS, the tail only by the owner (the scheme
// of Go's per-P run queues). When the ring is full, or while older threads wait in the
// overflow list, new threads go to the overflow list; the owner moves them back in FIFO
// order as the ring drains. Threads spawned with stealable=false sit in a separate
// owner-only FIFO; Pop() takes whichever head was queued first (Thread::seq), so a core runs
// its threads in the order they became runnable.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "junction/sched/thread.h"

namespace junction::sched {

class RunQueue {
 public:
  static constexpr std::uint32_t kRingSize = 512;

  // Owner only. Never fails, never allocates.
  void Push(detail::Thread* t) {
    t->seq = next_seq_++;
    if (next_ == nullptr && pinned_.empty() && overflow_.empty() && RingSizeHint() == 0) {
      // The queue is empty: the thread goes to the owner's private slot, which Pop takes
      // without a CAS. It is the oldest queued thread by construction (everything queued
      // after it goes behind it), so FIFO order holds. Thieves cannot take it: a core with
      // a single queued thread runs it next anyway.
      next_ = t;
      return;
    }
    if (!t->stealable) {
      pinned_.PushBack(t);
      return;
    }
    const std::uint32_t h = head_.load(std::memory_order_acquire);
    const std::uint32_t tl = tail_.load(std::memory_order_relaxed);
    if (overflow_.empty() && tl - h < kRingSize) {
      slots_[tl % kRingSize].store(t, std::memory_order_relaxed);
      tail_.store(tl + 1, std::memory_order_release);
    } else {
      overflow_.PushBack(t);
    }
  }

  // Owner only. The next runnable thread in FIFO order, or nullptr.
  // Owner only. Takes `t` out of the private slot if it is there (a queued thread no thief
  // can take), so the owner can run it directly; false otherwise.
  bool TakeIfNext(detail::Thread* t) {
    if (next_ != t) return false;
    next_ = nullptr;
    return true;
  }

  // The private slot is looked at inline (every yield between two threads takes it); the
  // rest is a call.
  __attribute__((always_inline)) detail::Thread* Pop() {
    if (next_ != nullptr) return std::exchange(next_, nullptr);  // oldest, see Push
    return PopQueued();
  }

 private:
  __attribute__((noinline)) detail::Thread* PopQueued() {
    if (pinned_.empty() && overflow_.empty()) return PopRing();  // the common case
    if (!overflow_.empty() && RingSizeHint() == 0) Refill();
    detail::Thread* ring = PeekRingSeq();
    if (!pinned_.empty() && (ring == nullptr || pinned_.front()->seq < ring->seq)) {
      return pinned_.PopFront();
    }
    if (detail::Thread* t = PopRing()) return t;
    if (!overflow_.empty()) {  // the ring was stolen from under us
      Refill();
      if (detail::Thread* t = PopRing()) return t;
    }
    return pinned_.empty() ? nullptr : pinned_.PopFront();
  }

 public:

  // Any core. Moves up to half of this ring's threads into `thief` (which must be the
  // calling core's own queue, that of `thief_core`, which becomes their home). Returns how
  // many moved.
  std::uint32_t StealHalf(RunQueue& thief, Core* thief_core) {
    detail::Thread* grabbed[kRingSize / 2];
    std::uint32_t n = 0;
    while (true) {
      const std::uint32_t h = head_.load(std::memory_order_acquire);
      const std::uint32_t tl = tail_.load(std::memory_order_acquire);
      n = tl - h;
      n = n - n / 2;
      if (n == 0) return 0;
      if (n > kRingSize / 2) continue;  // read head and tail at different times: retry
      for (std::uint32_t i = 0; i < n; ++i) {
        grabbed[i] = slots_[(h + i) % kRingSize].load(std::memory_order_relaxed);
      }
      std::uint32_t expected = h;
      if (head_.compare_exchange_strong(expected, h + n, std::memory_order_acq_rel)) break;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      grabbed[i]->core = thief_core;
      thief.Push(grabbed[i]);
    }
    return n;
  }

  // Any core; a hint only (may be stale by the time the caller acts on it).
  std::uint32_t RingSizeHint() const {
    return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed);
  }
  // Owner only.
  bool Empty() const {
    return next_ == nullptr && RingSizeHint() == 0 && overflow_.empty() && pinned_.empty();
  }
  std::size_t SizeOwner() const {
    return (next_ != nullptr) + RingSizeHint() + overflow_.size() + pinned_.size();
  }

 private:
  // Owner-only intrusive FIFO through Thread::next.
  class List {
   public:
    bool empty() const { return head_ == nullptr; }
    std::size_t size() const { return size_; }
    detail::Thread* front() const { return head_; }
    void PushBack(detail::Thread* t) {
      t->next = nullptr;
      if (tail_ != nullptr) {
        tail_->next = t;
      } else {
        head_ = t;
      }
      tail_ = t;
      ++size_;
    }
    detail::Thread* PopFront() {
      detail::Thread* t = head_;
      head_ = t->next;
      if (head_ == nullptr) tail_ = nullptr;
      --size_;
      return t;
    }

   private:
    detail::Thread* head_ = nullptr;
    detail::Thread* tail_ = nullptr;
    std::size_t size_ = 0;
  };

  detail::Thread* PeekRingSeq() const {
    const std::uint32_t h = head_.load(std::memory_order_acquire);
    if (h == tail_.load(std::memory_order_relaxed)) return nullptr;
    return slots_[h % kRingSize].load(std::memory_order_relaxed);
  }

  detail::Thread* PopRing() {
    while (true) {
      std::uint32_t h = head_.load(std::memory_order_acquire);
      const std::uint32_t tl = tail_.load(std::memory_order_relaxed);
      if (h == tl) return nullptr;
      detail::Thread* t = slots_[h % kRingSize].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(h, h + 1, std::memory_order_acq_rel)) return t;
    }
  }

  void Refill() {
    const std::uint32_t h = head_.load(std::memory_order_acquire);
    std::uint32_t tl = tail_.load(std::memory_order_relaxed);
    while (!overflow_.empty() && tl - h < kRingSize) {
      slots_[tl % kRingSize].store(overflow_.PopFront(), std::memory_order_relaxed);
      ++tl;
    }
    tail_.store(tl, std::memory_order_release);
  }

  alignas(64) std::atomic<std::uint32_t> head_{0};  // consumers (owner and thieves) CAS
  alignas(64) std::atomic<std::uint32_t> tail_{0};  // owner only
  // Owner-only state on its own line: thieves read tail_ (RingSizeHint), and a line the
  // owner writes on every Push/Pop next to it would be pulled away by every look.
  alignas(64) std::uint64_t next_seq_ = 0;
  detail::Thread* next_ = nullptr;  // owner-only slot: the oldest thread when set
  List overflow_;
  List pinned_;
  std::atomic<detail::Thread*> slots_[kRingSize] = {};
};

}  // namespace junction::sched
