// parallel_for.h — a small fork-join loop over std::threads for the CPU kernels.
//
// ParallelFor(n, threads, fn) calls fn(i) once for every i in [0, n), on up to `threads`
// threads: the caller plus threads-1 std::threads started for this call and joined before it
// returns (blocking). Work is handed out one index at a time from an atomic counter, so fn
// should do a block of work per index. fn must be safe to call concurrently for different i
// and must not throw.
#pragma once

#include <cstdint>
#include <functional>

namespace swiglu {

// The thread count to use for `requested`: requested if > 0, else the hardware concurrency
// (at least 1).
int ResolveThreads(int requested);

void ParallelFor(int64_t n, int threads, const std::function<void(int64_t)>& fn);

}  // namespace swiglu
