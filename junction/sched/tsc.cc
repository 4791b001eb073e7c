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

}  // namespace junction::sched
