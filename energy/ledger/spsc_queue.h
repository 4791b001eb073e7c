// spsc_queue.h — a bounded lock-free single-producer single-consumer ring of trivially
// copyable records; no allocation after construction.
//
// Contract: exactly one producer thread calls TryPush and exactly one consumer thread calls
// TryPop at any time (they may differ). Neither blocks. Capacity is a power of two.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace energy {

template <typename T>
class SpscQueue {
  static_assert(std::is_trivially_copyable_v<T>, "records are copied by value into the ring");

 public:
  // capacity: rounded up to a power of two, at least 2. Allocates the ring once.
  explicit SpscQueue(size_t capacity) {
    size_t c = 2;
    while (c < capacity) c <<= 1;
    mask_ = c - 1;
    slots_ = std::make_unique<T[]>(c);
  }
  SpscQueue(const SpscQueue&) = delete;
  SpscQueue& operator=(const SpscQueue&) = delete;

  // Producer only. False when full (the record is not queued).
  bool TryPush(const T& v) {
    return TryPushWith([&v](T& slot) { slot = v; });
  }

  // Producer only: the same, filling the slot in place with fill(T&) (one copy of a large
  // record instead of two).
  template <class Fill>
  bool TryPushWith(Fill&& fill) {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ > mask_) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail - cached_head_ > mask_) return false;
    }
    fill(slots_[tail & mask_]);
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Producer only: claims min(n, free room) slots and lets fill(std::span<T> slots, size_t
  // first) write them in place, once per contiguous run (twice when the claim wraps the ring's
  // end; `first` counts from 0 over the claim), then publishes them all at once. Returns how
  // many were claimed (0 when full: fill is not called).
  template <class Fill>
  size_t PushManyWith(size_t n, Fill&& fill) {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ + n > mask_ + 1) cached_head_ = head_.load(std::memory_order_acquire);
    const size_t k = std::min(n, mask_ + 1 - (tail - cached_head_));
    if (k == 0) return 0;
    const size_t first = tail & mask_;
    const size_t run = std::min(k, mask_ + 1 - first);  // up to the ring's end
    fill(std::span<T>(slots_.get() + first, run), size_t{0});
    if (run < k) fill(std::span<T>(slots_.get(), k - run), run);
    tail_.store(tail + k, std::memory_order_release);
    return k;
  }

  // Consumer only. False when empty.
  bool TryPop(T* out) {
    const size_t head = head_.load(std::memory_order_relaxed);
    if (head == cached_tail_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head == cached_tail_) return false;
    }
    *out = slots_[head & mask_];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer only. Appends every record queued when it starts to `out` (in order, in at most
  // two contiguous copies) and frees their slots at once; returns how many. `out` may
  // allocate (the caller reserves to avoid it).
  size_t PopAllInto(std::vector<T>& out) { return PopInto(out, SIZE_MAX); }
  // The same, for at most `max` records (the oldest).
  size_t PopInto(std::vector<T>& out, size_t max) {
    size_t head;
    const size_t n = Readable(max, &head);
    if (n == 0) return 0;
    const size_t first = head & mask_;
    const size_t run = std::min(n, mask_ + 1 - first);  // up to the ring's end
    out.insert(out.end(), slots_.get() + first, slots_.get() + first + run);
    out.insert(out.end(), slots_.get(), slots_.get() + (n - run));
    head_.store(head + n, std::memory_order_release);
    return n;
  }

  // Consumer only. Calls fn(const T&) on each of at most `max` of the oldest records where it
  // lies in the ring (no copy out: a large record read once, not copied and read again), in
  // order; returns how many. Their slots are freed in steps of kConsumeStep as it goes, so a
  // slow fn (the ledger writer yields inside it) holds back at most that many from the producer.
  // fn must not call back into the queue.
  template <class Fn>
  size_t ConsumeUpTo(size_t max, Fn&& fn) {
    size_t head;
    const size_t n = Readable(max, &head);
    for (size_t i = 0; i < n; ++i) {
      fn(static_cast<const T&>(slots_[(head + i) & mask_]));
      if ((i + 1) % kConsumeStep == 0) head_.store(head + i + 1, std::memory_order_release);
    }
    if (n % kConsumeStep != 0) head_.store(head + n, std::memory_order_release);
    return n;
  }

  // Consumer only: calls fn(const T&) on each of at most `max` of the oldest records where it
  // lies, in order, without freeing any; returns how many. They stay valid (the producer does
  // not reuse their slots) until Drop() or a pop frees them.
  template <class Fn>
  size_t PeekUpTo(size_t max, Fn&& fn) {
    size_t head;
    const size_t n = Readable(max, &head);
    for (size_t i = 0; i < n; ++i) fn(static_cast<const T&>(slots_[(head + i) & mask_]));
    return n;
  }
  // Consumer only: frees the n oldest records (n no more than are queued: a Peek's count).
  void Drop(size_t n) { head_.store(head_.load(std::memory_order_relaxed) + n, std::memory_order_release); }

  // Any thread; a snapshot that may be stale by the time it is used.
  size_t ApproxSize() const {
    return tail_.load(std::memory_order_acquire) - head_.load(std::memory_order_acquire);
  }
  size_t capacity() const { return mask_ + 1; }

 private:
  // Consumer only: how many of the queued records (at most `max`) a read may take now, from
  // *head on; refreshes the consumer's view of tail_.
  size_t Readable(size_t max, size_t* head) {
    *head = head_.load(std::memory_order_relaxed);
    cached_tail_ = tail_.load(std::memory_order_acquire);
    return std::min(cached_tail_ - *head, max);
  }

  static constexpr size_t kLine = 64;
  static constexpr size_t kConsumeStep = 64;
  alignas(kLine) std::atomic<size_t> head_{0};  // written by the consumer
  size_t cached_tail_ = 0;                      // consumer's view of tail_
  alignas(kLine) std::atomic<size_t> tail_{0};  // written by the producer
  size_t cached_head_ = 0;                      // producer's view of head_
  alignas(kLine) size_t mask_ = 0;
  std::unique_ptr<T[]> slots_;
};

}  // namespace energy
