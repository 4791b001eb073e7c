// gateway_metrics.h — the OpenFaaS gateway's invocation metrics, counted per core.
//
//   gateway_function_invocation_started{function_name="NAME.NS"}    counter
//   gateway_function_invocation_total{function_name="NAME.NS",code} counter
//   gateway_functions_seconds{function_name="NAME.NS"}              histogram (Prometheus'
//       default buckets, as the gateway's HistogramVec has)
//   gateway_service_count{function_name="NAME.NS"}                  gauge: instances now
//
// The invocation path counts into the calling core's own slots of the function (relaxed
// loads and stores, no read-modify-write, no lock): each core has its own cache lines per
// function. A function's slots are found through the core's own lookup table; the first call
// of a function on a core takes the registry's mutex once to create them. Functions are never
// forgotten (a removed function's counters stay until the node restarts, like the gateway's).
//
// Threads: Started/Finished from uthreads (or any thread: calls off the runtime share one
// slot guarded by a mutex); Collect from any thread at any time (a scrape sums the cores; a
// live sum is consistent enough, not an atomic cut).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "faasd-shim/metrics/registry.h"

namespace faasnode::metrics {

// Prometheus' DefBuckets (client_golang): the gateway's gateway_functions_seconds buckets.
inline constexpr std::array<double, 11> kDefaultBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                           0.5,   1,    2.5,   5,    10};

// What gateway_service_count reports: one entry per deployed function.
struct ServiceCount {
  std::string function_name;  // NAME.NS
  double replicas = 0;
};
using ServiceLister = std::function<std::vector<ServiceCount>()>;

class GatewayMetrics {
 public:
  // `num_cores`: the runtime's cores; `services` (may be empty) lists deployed functions.
  GatewayMetrics(int num_cores, ServiceLister services);
  ~GatewayMetrics();
  GatewayMetrics(const GatewayMetrics&) = delete;
  GatewayMetrics& operator=(const GatewayMetrics&) = delete;

  // An invocation of NAME.NS began / ended with `code` after `seconds`.
  void Started(std::string_view name, std::string_view ns);
  void Finished(std::string_view name, std::string_view ns, int code, double seconds);

  // Writes the four gateway families.
  void Collect(MetricWriter& w) const;

 private:
  struct Slot;
  struct Function;
  struct CoreTable;
  // The calling core's slot of NAME.NS (created on first use), and the lock to hold while
  // writing it (null on a runtime core: only that core writes there).
  Slot* SlotFor(std::string_view name, std::string_view ns, std::unique_lock<std::mutex>& off_runtime);
  // SlotFor's lookup by the label NAME.NS in `table` (core `core`'s), creating the slots.
  Slot* SlotForLabel(CoreTable& table, int core, std::string_view name, std::string_view ns,
                     const std::unique_lock<std::mutex>& off_runtime);

  int num_cores_;
  ServiceLister services_;
  mutable std::mutex mu_;  // functions_ (creation, and the off-runtime slot)
  std::map<std::string, std::unique_ptr<Function>, std::less<>> functions_;
  std::vector<std::unique_ptr<CoreTable>> cores_;  // [num_cores] is the off-runtime table
};

}  // namespace faasnode::metrics
