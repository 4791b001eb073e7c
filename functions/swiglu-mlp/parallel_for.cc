// parallel_for.cc — fork-join loop over std::threads with an atomic work counter.
#include "functions/swiglu-mlp/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace swiglu {

int ResolveThreads(int requested) {
  if (requested > 0) return requested;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void ParallelFor(int64_t n, int threads, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  int workers = static_cast<int>(std::min<int64_t>(ResolveThreads(threads), n));
  if (workers == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      fn(i);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace swiglu
