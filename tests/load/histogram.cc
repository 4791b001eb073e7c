// histogram.cc — bucket arithmetic and queries of the HDR-style histogram.
#include "tests/load/histogram.h"

#include <algorithm>
#include <cmath>

namespace faasload {

Histogram::Histogram() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
}

std::uint64_t Histogram::LowestOf(std::size_t index) {
  if (index < kSubCount) return index;
  const std::size_t rel = index - kSubCount;
  const int e = kSubBits + static_cast<int>(rel / kHalf);
  const int shift = e - (kSubBits - 1);
  return (kHalf + rel % kHalf) << shift;
}

std::uint64_t Histogram::HighestOf(std::size_t index) {
  if (index < kSubCount) return index;
  const std::size_t rel = index - kSubCount;
  const int e = kSubBits + static_cast<int>(rel / kHalf);
  const int shift = e - (kSubBits - 1);
  return LowestOf(index) + (1ull << shift) - 1;
}

void Histogram::Merge(const Histogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) {
    const std::uint64_t n = other.counts_[i].load(std::memory_order_relaxed);
    if (n != 0) Bump(counts_[i], n);
  }
  Bump(total_, other.total_.load(std::memory_order_relaxed));
  Bump(sum_, other.sum_.load(std::memory_order_relaxed));
  Bump(clamped_, other.clamped_.load(std::memory_order_relaxed));
  if (other.count() != 0) {
    max_.store(std::max(max(), other.max()), std::memory_order_relaxed);
    min_.store(std::min(min_.load(std::memory_order_relaxed),
                        other.min_.load(std::memory_order_relaxed)),
               std::memory_order_relaxed);
  }
}

void Histogram::Reset() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
  total_.store(0, std::memory_order_relaxed);
  sum_.store(0, std::memory_order_relaxed);
  clamped_.store(0, std::memory_order_relaxed);
  max_.store(0, std::memory_order_relaxed);
  min_.store(~0ull, std::memory_order_relaxed);
}

double Histogram::mean() const {
  const std::uint64_t n = count();
  return n == 0 ? 0.0 : static_cast<double>(sum_.load(std::memory_order_relaxed)) / n;
}

std::uint64_t Histogram::ValueAtPercentile(double percentile) const {
  // Sum the buckets first: a concurrent writer may have bumped a bucket but not yet total_.
  std::uint64_t total = 0;
  for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  percentile = std::clamp(percentile, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(total)));
  rank = std::clamp<std::uint64_t>(rank, 1, total);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i].load(std::memory_order_relaxed);
    if (seen >= rank) return std::min(HighestOf(i), max());
  }
  return max();
}

std::uint64_t Histogram::CountAbove(std::uint64_t value) const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (LowestOf(i) > value) n += counts_[i].load(std::memory_order_relaxed);
  }
  return n;
}

void Histogram::ForEachBucket(
    const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& fn) const {
  for (std::size_t i = 0; i < kBuckets; ++i) {
    const std::uint64_t n = counts_[i].load(std::memory_order_relaxed);
    if (n != 0) fn(LowestOf(i), HighestOf(i), n);
  }
}

}  // namespace faasload
