// tsc.h — the time-stamp counter (cycle clock used for accounting) and the monotonic clock.
//
// Cycle accounting reads the TSC at every switch; deadlines and timers use CLOCK_MONOTONIC
// (std::chrono::steady_clock) nanoseconds, which MonoNs() extrapolates from the TSC between
// readings of the clock a millisecond apart. TscHz() is calibrated once per process against
// CLOCK_MONOTONIC_RAW (about 20 ms, on first call).
#pragma once

#include <time.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdint>

namespace junction::sched {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline std::uint64_t Rdtsc() { return __rdtsc(); }

// TSC ticks per second, calibrated once (thread-safe, blocks ~20 ms the first time).
double TscHz();

namespace detail {
// A kthread's last reading of CLOCK_MONOTONIC (and of CLOCK_REALTIME's offset from it) with
// the TSC at that moment. MonoNs() extrapolates from it by the TSC for up to a millisecond
// and reads the clocks again after that, so the TSC rate's calibration error (~100 ppm)
// shows as 0.1 us at most, and a clock step or a TSC jump (migration, suspend) lasts one
// millisecond. The anchor is per kthread: no cache line is shared between cores.
struct MonoAnchor {
  std::uint64_t tsc = 0;
  std::uint64_t period_ticks = 0;  // 0: not read yet
  double ns_per_tick = 0;
  std::int64_t ns = 0;
  std::int64_t last = 0;           // the largest value returned on this kthread
  std::int64_t realtime_offset = 0;
};
inline thread_local MonoAnchor mono_anchor;
std::int64_t MonoNsReanchor(std::uint64_t tsc);  // reads the clocks (vDSO), returns MonoNs
}  // namespace detail

// Monotonic nanoseconds, the steady_clock epoch (CLOCK_MONOTONIC), never decreasing on a
// kthread. From the TSC and a per-kthread anchor: ~10 ns against ~30-50 for a vDSO
// clock_gettime in a VM (kvm-clock); readings on different kthreads agree within ~0.1 us.
// MonoNsAt(t): the same from a TSC value this kthread read a moment ago (Rdtsc()), for a
// path that needs both and should pay for one read (~11 ns on the AMD VMs here).
inline std::int64_t MonoNsAt(std::uint64_t t) {
  detail::MonoAnchor& a = detail::mono_anchor;
  const std::uint64_t d = t - a.tsc;  // wraps (huge) if the TSC went back: read the clock
  if (d >= a.period_ticks) [[unlikely]] return detail::MonoNsReanchor(t);
  std::int64_t ns = a.ns + static_cast<std::int64_t>(static_cast<double>(d) * a.ns_per_tick);
  if (ns < a.last) ns = a.last;
  a.last = ns;
  return ns;
}
inline std::int64_t MonoNs() { return MonoNsAt(Rdtsc()); }

// MonoNs() as a steady_clock time point, for deadlines on hot paths (Clock::now() is a vDSO
// call; both read the same clock).
inline Deadline Now() { return Deadline(std::chrono::nanoseconds(MonoNs())); }

// CLOCK_REALTIME nanoseconds (Unix time) at MonoNs()'s cost: MonoNs plus the offset between
// the two clocks read at the anchor (a step of the wall clock shows within a millisecond).
// RealtimeNsAt(t): from a TSC value this kthread read a moment ago, as MonoNsAt.
inline std::int64_t RealtimeNsAt(std::uint64_t t) {
  const std::int64_t mono = MonoNsAt(t);
  return mono + detail::mono_anchor.realtime_offset;
}
inline std::int64_t RealtimeNs() { return RealtimeNsAt(Rdtsc()); }

// CLOCK_MONOTONIC at the kernel tick's resolution: the same epoch as MonoNs, at most one tick
// (1-10 ms) behind it, and ~5 ns a read against ~30 in a VM. For timestamps that only age
// things by seconds (an instance's last use, say), never for deadlines.
inline std::int64_t CoarseMonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

inline double CyclesToNs(std::uint64_t cycles) { return static_cast<double>(cycles) * 1e9 / TscHz(); }
inline std::uint64_t NsToCycles(double ns) { return static_cast<std::uint64_t>(ns * TscHz() / 1e9); }

}  // namespace junction::sched
