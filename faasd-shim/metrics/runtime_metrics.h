// runtime_metrics.h — faasnode_* series of the runtime, the network stack and the HTTP server.
//
//   faasnode_core_busy_seconds_total{core}       cycles charged to invocations and the stack
//   faasnode_core_overhead_seconds_total{core}   scheduling and polling cycles
//   faasnode_core_idle_seconds_total{core}       the kthread was blocked
//       (from the cycle accounts: CycleTotals adds up every closed interval; seconds = cycles
//        / TSC Hz)
//   faasnode_sched_switches_total{core}, faasnode_sched_steals_total{core},
//   faasnode_sched_remote_wakes_total{core}, faasnode_sched_idle_blocks_total{core},
//   faasnode_sched_timers_fired_total{core}     the runtime's per-core counters
//   faasnode_net_{conns_accepted,conns_connected,bytes_received,bytes_sent,datagrams_received,
//     datagrams_sent,timeouts,errors}_total{core}  NetCounterSet (core="external" for callers
//     off the runtime)
//   faasnode_http_connection_uthreads            open connections: one uthread each
//   faasnode_http_requests_total, faasnode_http_responses_total{class="4xx"|"5xx"},
//   faasnode_http_timeouts_total
//
// Not exported (the runtime does not count them): the number of live uthreads other than the
// connection ones.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "faasd-shim/metrics/registry.h"
#include "junction/http/server/server.h"
#include "junction/net/counters.h"
#include "junction/sched/cycle_accounts.h"
#include "junction/sched/runtime.h"

namespace faasnode::metrics {

// Running sums of the cycle accounts, per core. One writer (whoever closes intervals: the
// energy sampler, or CloseAndObserve when nothing else does); readers any time.
class CycleTotals {
 public:
  explicit CycleTotals(int num_cores);
  // Adds one closed interval of every core. Single writer.
  void Observe(const junction::sched::IntervalSnapshot& snapshot);
  // Closes an interval itself and observes it: for nodes where no sampler closes intervals
  // (energy billing off). Must not be used while another reader closes intervals: each
  // interval goes to one reader only. From a uthread it sleeps cooperatively while waiting.
  junction::Status<void> CloseAndObserve(junction::sched::Runtime* rt);
  void Collect(MetricWriter& w) const;

 private:
  struct alignas(64) Core {
    std::atomic<std::uint64_t> busy{0}, overhead{0}, idle{0};
  };
  std::vector<Core> cores_;
  std::atomic<double> tsc_hz_{0};
};

struct RuntimeSources {
  const junction::sched::Runtime* runtime = nullptr;
  const CycleTotals* cycles = nullptr;              // may be null
  const junction::net::NetCounterSet* net = nullptr;  // may be null
  std::function<junction::http::ServerStats()> http;   // may be empty
  // Called at each scrape before reading `cycles` (CloseAndObserve when no sampler runs).
  std::function<void()> before_scrape;
};

// The collector of every series above; the sources must outlive it.
Collector MakeRuntimeCollector(RuntimeSources sources);

}  // namespace faasnode::metrics
