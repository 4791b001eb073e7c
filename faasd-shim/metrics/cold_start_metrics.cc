// cold_start_metrics.cc — writes faasnode_cold_starts_total and faasnode_cold_start_seconds.
#include "faasd-shim/metrics/cold_start_metrics.h"

namespace faasnode::metrics {

Collector MakeColdStartCollector(ColdStartLister list) {
  return [list = std::move(list)](MetricWriter& w) {
    const std::vector<ColdStartSeries> all = list();
    w.Family("faasnode_cold_starts_total", "counter",
             "Calls that waited for an instance of the function to start (first use or from zero).");
    for (const ColdStartSeries& s : all) w.Sample({{"function_name", s.function_name}}, static_cast<double>(s.count));
    w.Family("faasnode_cold_start_seconds", "histogram",
             "How long calls waited for an instance of the function to start (its init).");
    for (const ColdStartSeries& s : all) {
      w.Histogram({{"function_name", s.function_name}}, s.bounds, s.cumulative, s.count, s.seconds_total);
    }
  };
}

}  // namespace faasnode::metrics
