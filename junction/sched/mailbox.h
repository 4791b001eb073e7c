// mailbox.h — a wake-up mailbox from one runtime core to another: a single-producer,
// single-consumer ring of thread pointers.
//
// Each core has one Mailbox per other core (Core::PushFrom). A wake-up is one slot written
// by the waker's kthread and read by the target's: the waker never reads a line the target
// writes on the wake path, and the target never has to take ownership of a line the waker
// writes (unlike the shared Inbox, where both sides CAS/exchange the head). Each slot carries
// its own sequence number, so the target polls the next slot's line (held shared, an L1 hit
// until the waker writes it) and there is no shared tail index to read. The producer learns
// how far the consumer has read only when its own count says the ring is full; it then
// reads the consumer's published head (a line the consumer writes once per drain).
//
// Producer: only the kthread of the source core (uthreads are not preempted, so whatever
// runs on that core — a uthread, a timer, a poll hook — is that kthread). Consumer: only the
// target core's kthread. A full ring is reported, not waited on: the caller falls back to
// the target's shared Inbox.
#pragma once

#include <atomic>
#include <cstdint>

#include "junction/sched/thread.h"

namespace junction::sched {

class Mailbox {
 public:
  static constexpr std::uint64_t kSlots = 128;  // 4 slots a line: 32 lines, 2 KiB

  // Producer only. false when the ring is full (the caller must deliver `t` another way).
  // Release: everything the producer wrote before is visible to the consumer that takes `t`.
  bool Push(detail::Thread* t) {
    if (tail_ - head_cache_ >= kSlots) {
      head_cache_ = head_pub_.load(std::memory_order_acquire);
      if (tail_ - head_cache_ >= kSlots) return false;
    }
    Slot& s = slots_[tail_ % kSlots];
    s.thread.store(t, std::memory_order_relaxed);
    s.seq.store(++tail_, std::memory_order_release);
    return true;
  }

  // Consumer only: whether a push is waiting (one load of a line the producer writes only
  // when it pushes).
  bool MaybeNonEmpty() const {
    return slots_[head_ % kSlots].seq.load(std::memory_order_acquire) == head_ + 1;
  }

  // Consumer only. Calls fn(thread) for every pushed thread in push order; returns how many.
  template <typename Fn>
  std::uint32_t Drain(Fn&& fn) {
    std::uint32_t n = 0;
    while (true) {
      Slot& s = slots_[head_ % kSlots];
      if (s.seq.load(std::memory_order_acquire) != head_ + 1) break;
      detail::Thread* t = s.thread.load(std::memory_order_relaxed);
      ++head_;
      ++n;
      fn(t);
    }
    // Published once per drain, not per slot: the producer reads it only when full.
    if (n != 0) head_pub_.store(head_, std::memory_order_release);
    return n;
  }

 private:
  struct Slot {
    std::atomic<std::uint64_t> seq{0};  // k + 1 once the k-th push (from 0) is in this slot
    std::atomic<detail::Thread*> thread{nullptr};
  };

  alignas(64) std::uint64_t tail_ = 0;        // producer only: pushes so far
  std::uint64_t head_cache_ = 0;              // producer only: last head_pub_ it read
  alignas(64) std::uint64_t head_ = 0;        // consumer only: takes so far
  alignas(64) std::atomic<std::uint64_t> head_pub_{0};  // consumer writes, producer reads
  alignas(64) Slot slots_[kSlots];
};

}  // namespace junction::sched
