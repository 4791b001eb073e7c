// tsc.h — the time-stamp counter (cycle clock used for accounting) and the monotonic clock.
//
// Cycle accounting reads the TSC at every switch; deadlines and timers use CLOCK_MONOTONIC
// (std::chrono::steady_clock) nanoseconds. TscHz() is calibrated once per process against
// CLOCK_MONOTONIC_RAW (about 20 ms, on first call) and is only used to convert.
#pragma once

#include <time.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdint>

namespace junction::sched {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline std::uint64_t Rdtsc() { return __rdtsc(); }

// Monotonic nanoseconds (the steady_clock epoch). vDSO, no system call.
inline std::int64_t MonoNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// CLOCK_MONOTONIC at the kernel tick's resolution: the same epoch as MonoNs, at most one tick
// (1-10 ms) behind it, and ~5 ns a read against ~30 in a VM. For timestamps that only age
// things by seconds (an instance's last use, say), never for deadlines.
inline std::int64_t CoarseMonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

// TSC ticks per second, calibrated once (thread-safe, blocks ~20 ms the first time).
double TscHz();

inline double CyclesToNs(std::uint64_t cycles) { return static_cast<double>(cycles) * 1e9 / TscHz(); }
inline std::uint64_t NsToCycles(double ns) { return static_cast<std::uint64_t>(ns * TscHz() / 1e9); }

}  // namespace junction::sched
