// steady_meter.h — a replayed package counter that rises by exactly 1000 uJ (1 mJ) per read,
// one read per 10 ms of trace time: a meter whose every interval's joules are known, for the
// biller's tests and its benchmark (energy_biller_test.cc, energy_biller_bench.cc).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "energy/sensors/replay.h"

namespace faasnode::billing {

inline energy::ReplaySensor SteadyPackageMeter(int reads) {
  std::string text(energy::kTraceHeader);
  for (int i = 0; i < reads; ++i) {
    text += std::to_string(1'700'000'000'000'000'000LL + i * 10'000'000LL) + ",package,0," +
            std::to_string(5'000'000 + i * 1000) + ",262143328850\n";
  }
  auto s = energy::ReplaySensor::Parse(text);
  if (!s) {  // the text above is fixed: only a change to the trace format gets here
    std::fprintf(stderr, "SteadyPackageMeter: %s\n", s.error().message().c_str());
    std::abort();
  }
  return std::move(*s);
}

}  // namespace faasnode::billing
