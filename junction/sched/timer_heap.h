// timer_heap.h — a core's timers: a binary min-heap of (deadline, wait token, thread).
//
// Owner core only. A timer is never cancelled in place: the thread's wait_token changes when
// its wait ends, and a timer whose token no longer matches does nothing when it fires
// (lazy cancellation, O(log n) per arm and fire, no search).
//
// Dead entries are dropped in bulk, though: most waits end long before their deadline (a
// keep-alive read parks with a 60 s idle deadline and is woken within microseconds), so
// without that the heap would hold every such wait of the last minute (rate x 60 entries:
// millions at 70k requests/s, and each later pop a cache-missing sift through them). When
// the heap has doubled since the last sweep, Arm removes the entries whose thread no longer
// waits with their token and re-heapifies: O(n) per n arms, so O(1) per arm.
// (Thread blocks are never unmapped, so reading a dead entry's wait_token is safe: see
// stack_pool.h.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "junction/sched/thread.h"

namespace junction::sched {

class TimerHeap {
 public:
  struct Entry {
    std::int64_t deadline_ns;
    std::uint64_t token;
    detail::Thread* thread;
  };

  void Arm(std::int64_t deadline_ns, std::uint64_t token, detail::Thread* t) {
    if (heap_.size() >= sweep_at_) Sweep();
    heap_.push_back({deadline_ns, token, t});
    SiftUp(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::int64_t NextDeadlineNs() const { return heap_.empty() ? INT64_MAX : heap_[0].deadline_ns; }

  // Drops every entry whose thread's wait_token no longer equals the entry's token (its wait
  // ended: the timer would do nothing), keeping the others as a heap.
  void Sweep() {
    std::size_t kept = 0;
    for (const Entry& e : heap_) {
      if (e.thread->wait_token.load(std::memory_order_relaxed) == e.token) heap_[kept++] = e;
    }
    heap_.resize(kept);
    for (std::size_t i = kept / 2; i-- > 0;) SiftDown(i);
    sweep_at_ = std::max<std::size_t>(kMinSweep, 2 * kept);
  }

  // Removes and returns the earliest entry. Precondition: !empty().
  Entry PopMin() {
    Entry top = heap_[0];
    heap_[0] = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0);
    return top;
  }

 private:
  void SiftUp(std::size_t i) {
    while (i > 0) {
      std::size_t p = (i - 1) / 2;
      if (heap_[p].deadline_ns <= heap_[i].deadline_ns) break;
      std::swap(heap_[p], heap_[i]);
      i = p;
    }
  }
  void SiftDown(std::size_t i) {
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < n && heap_[l].deadline_ns < heap_[m].deadline_ns) m = l;
      if (r < n && heap_[r].deadline_ns < heap_[m].deadline_ns) m = r;
      if (m == i) break;
      std::swap(heap_[m], heap_[i]);
      i = m;
    }
  }
  static constexpr std::size_t kMinSweep = 64;
  std::vector<Entry> heap_;
  std::size_t sweep_at_ = kMinSweep;
};

}  // namespace junction::sched
