// cold_start_metrics.h — the cold-start series: how often a call waited for an instance to
// start (first use, or after a scale to zero) and for how long.
//
//   faasnode_cold_starts_total{function_name="NAME.NS"}   counter
//   faasnode_cold_start_seconds{function_name="NAME.NS"}  histogram (the pool's bounds)
//
// Only cold starts on a call's path: the ones that call's reply reports in
// X-Cold-Start-Seconds. Instances started ahead of calls (a warm floor) are not counted. The
// counts live in each function's pool (faasd-shim/instances), so a redeployed function starts
// again from zero, which Prometheus reads as a counter reset.
//
// Threads: the lister runs at scrape time, on the scraping uthread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "faasd-shim/metrics/registry.h"

namespace faasnode::metrics {

struct ColdStartSeries {
  std::string function_name;            // NAME.NS
  std::span<const double> bounds;       // seconds, ascending; must outlive the scrape
  std::vector<std::uint64_t> cumulative;  // [i]: cold starts <= bounds[i]
  std::uint64_t count = 0;
  double seconds_total = 0;
};
using ColdStartLister = std::function<std::vector<ColdStartSeries>()>;

// A collector for Registry::Add writing both families from what `list` returns.
Collector MakeColdStartCollector(ColdStartLister list);

}  // namespace faasnode::metrics
