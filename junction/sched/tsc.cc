// tsc.cc — one-time TSC frequency calibration against CLOCK_MONOTONIC_RAW.
#include "junction/sched/tsc.h"

#include <time.h>

namespace junction::sched {
namespace {

std::int64_t RawNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

double Calibrate() {
  // Best of three 7 ms windows: a preemption inside a window only makes it longer, and the
  // ratio is taken over the same window, so any window is right; three guard against a
  // migration between cores with unsynchronised TSCs.
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t n0 = RawNs();
    const std::uint64_t t0 = Rdtsc();
    while (RawNs() - n0 < 7'000'000) {
    }
    const std::int64_t n1 = RawNs();
    const std::uint64_t t1 = Rdtsc();
    const double hz = static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(n1 - n0);
    if (i == 0 || hz < best) best = hz;
  }
  return best;
}

}  // namespace

double TscHz() {
  static const double hz = Calibrate();
  return hz;
}

namespace detail {

std::int64_t MonoNsReanchor(std::uint64_t tsc) {
  MonoAnchor& a = mono_anchor;
  if (a.period_ticks == 0) {
    const double hz = TscHz();
    // Slow by 0.1%: the extrapolation must never run ahead of CLOCK_MONOTONIC, or a timer
    // would fire before its deadline as the clock reads it. TscHz is measured against
    // CLOCK_MONOTONIC_RAW, and NTP slews CLOCK_MONOTONIC by up to 0.05%; the calibration's own
    // error is ~0.002%. So MonoNs lags the clock by up to ~1 us just before each re-read.
    a.ns_per_tick = 1e9 / hz * (1 - 1e-3);
    a.period_ticks = static_cast<std::uint64_t>(hz / 1000);  // 1 ms
  }
  timespec mono, real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  // The TSC read after the clocks: the anchor's time is then slightly older than its TSC,
  // which again errs on the side of lagging.
  (void)tsc;
  a.tsc = Rdtsc();
  a.ns = mono.tv_sec * 1'000'000'000LL + mono.tv_nsec;
  a.realtime_offset = real.tv_sec * 1'000'000'000LL + real.tv_nsec - a.ns;
  if (a.ns > a.last) a.last = a.ns;
  return a.last;
}

}  // namespace detail

}  // namespace junction::sched
