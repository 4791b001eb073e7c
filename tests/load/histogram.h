// histogram.h — an HDR-style latency histogram: log-linear buckets, fixed memory, no allocation.
//
// Values are unsigned integers (faasload records nanoseconds). Below 2048 every value has its
// own bucket; above, each power of two [2^e, 2^(e+1)) is split into 1024 equal buckets, so a
// value is kept to within 1/1024 of itself (better than 3 significant digits, <= 0.1% error).
// Values at or above kMaxValue (2^42, about 73 minutes in ns) are clamped to kMaxValue - 1 and
// counted in clamped().
//
//   Histogram h;                 // ~280 KiB, zeroed; allocate once, reuse with Reset()
//   h.Record(latency_ns);
//   std::uint64_t p99 = h.ValueAtPercentile(99.0);
//
// Thread-safety: one writer at a time; Record does relaxed atomic loads and stores, so
// another thread may read (Merge, percentiles) while it writes and sees a recent,
// slightly torn but never undefined state. Never blocks.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace faasload {

class Histogram {
 public:
  static constexpr int kSubBits = 11;                            // 2048 sub-buckets
  static constexpr std::uint64_t kSubCount = 1ull << kSubBits;   // exact below this
  static constexpr std::uint64_t kHalf = kSubCount / 2;          // buckets per power of two
  static constexpr int kMaxExponent = 41;                        // values < 2^42
  static constexpr std::uint64_t kMaxValue = 1ull << (kMaxExponent + 1);
  static constexpr std::size_t kBuckets = kSubCount + (kMaxExponent - kSubBits + 1) * kHalf;

  Histogram();
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Records one value (count n). Single writer; no allocation, no syscall.
  void Record(std::uint64_t value, std::uint64_t n = 1) {
    if (value >= kMaxValue) {
      value = kMaxValue - 1;
      Bump(clamped_, n);
    }
    Bump(counts_[IndexOf(value)], n);
    Bump(total_, n);
    Bump(sum_, value * n);
    if (value > max_.load(std::memory_order_relaxed)) max_.store(value, std::memory_order_relaxed);
    if (value < min_.load(std::memory_order_relaxed)) min_.store(value, std::memory_order_relaxed);
  }
  // Adds every count of `other` (which may be written concurrently) into this one.
  void Merge(const Histogram& other);
  void Reset();

  std::uint64_t count() const { return total_.load(std::memory_order_relaxed); }
  std::uint64_t clamped() const { return clamped_.load(std::memory_order_relaxed); }
  // 0 when empty.
  std::uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  std::uint64_t min() const { return count() == 0 ? 0 : min_.load(std::memory_order_relaxed); }
  double mean() const;

  // The smallest recorded bucket's upper bound such that at least `percentile`% of the values
  // are <= it (HDR's convention), capped at max(). 0 when empty. percentile in [0, 100].
  std::uint64_t ValueAtPercentile(double percentile) const;
  // How many recorded values are > `value` (bucket resolution: a bucket counts when its
  // lowest value is above `value`).
  std::uint64_t CountAbove(std::uint64_t value) const;

  // Calls fn(lowest, highest, count) for every non-empty bucket, ascending.
  void ForEachBucket(
      const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& fn) const;

  // Bucket arithmetic, exposed for tests.
  static std::size_t IndexOf(std::uint64_t value) {
    if (value < kSubCount) return static_cast<std::size_t>(value);
    const int e = 63 - __builtin_clzll(value);  // >= kSubBits
    const int shift = e - (kSubBits - 1);
    return kSubCount + static_cast<std::size_t>(e - kSubBits) * kHalf +
           static_cast<std::size_t>((value >> shift) - kHalf);
  }
  static std::uint64_t LowestOf(std::size_t index);
  static std::uint64_t HighestOf(std::size_t index);

 private:
  static void Bump(std::atomic<std::uint64_t>& a, std::uint64_t n) {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::array<std::atomic<std::uint64_t>, kBuckets> counts_;
  std::atomic<std::uint64_t> total_{0};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> clamped_{0};
  std::atomic<std::uint64_t> max_{0};
  std::atomic<std::uint64_t> min_{~0ull};
};

}  // namespace faasload
