// energy_metrics.h — the energy bill as Prometheus series, summed from the ledger rows the
// biller writes (BillingOptions::on_bills):
//
//   faasnode_energy_joules_total{function,zone,source}   joules billed to each function, per
//       zone (package, core, uncore, dram, psys, gpu) and source (rapl, nvml, model, replay)
//   faasnode_carbon_grams_total{function}                 operational gCO2e billed to it
//
// The same figures as the ledger's invocation rows (final bills, not the response-header
// estimates); a function's series appear with its first billed call. The node's own idle and
// overhead are not a function and are not in these series (see `faasnode carbon report`).
//
//   billing::EnergyTotals totals;
//   options.on_bills = [&](std::span<const energy::InvocationRecord> rows) { totals.Add(rows); };
//   registry.Add([&](metrics::MetricWriter& w) { totals.Collect(w); });
//
// Threads: Add from one thread at a time (the sampler, once per interval); Collect from any
// thread. A mutex held for an interval's additions or a scrape's copy: neither is on the data
// path.
//
// And the biller's queue counts (CollectBillerCounters, from EnergyBiller::counters()):
//
//   faasnode_ledger_records_aggregated_total   invocation rows the ledger folded into its
//       overflow_aggregates table because its queue was full (summed per function, not lost)
//   faasnode_ledger_rows_written_total         invocation rows committed one by one
//   faasnode_ledger_rows_lost_total            rows lost in crashes, as detected at start
//   faasnode_billing_calls_spilled_total       finished calls that found their core's billing
//       ring full (kept in a slower spill; the sampler is falling behind)
//
//   registry.Add([b = biller.get()](metrics::MetricWriter& w) { CollectBillerCounters(b->counters(), w); });
#pragma once

#include <array>
#include <map>
#include <span>
#include <mutex>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "energy/ledger/record.h"
#include "faasd-shim/billing/energy_biller.h"
#include "faasd-shim/metrics/registry.h"

namespace faasnode::billing {

class EnergyTotals {
 public:
  // Adds rows in order (a run of one function's rows costs one series lookup).
  void Add(std::span<const energy::InvocationRecord> rows);
  void Add(const energy::InvocationRecord& row) { Add(std::span<const energy::InvocationRecord>(&row, 1)); }
  void Collect(metrics::MetricWriter& w) const;

  // The source label of one zone of a row: gpu figures come from nvml when the row has it,
  // the other zones from the CPU-side meter (the row's sources without nvml).
  static std::string ZoneSource(energy::Zone zone, energy::SourceSet sources);

 private:
  // The zone's source label as a set (ZoneSource's text is made only at Collect).
  static energy::SourceSet ZoneSourceSet(energy::Zone zone, energy::SourceSet sources);
  // Keyed by (function, zone, source set) and looked up by a view, so Add allocates nothing
  // once a function's series exist (it runs once per invocation on the sampler).
  struct Key {
    std::string function;
    energy::Zone zone;
    std::uint8_t sources;
  };
  struct KeyView {
    std::string_view function;
    energy::Zone zone;
    std::uint8_t sources;
  };
  struct KeyLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::tie(a.function, a.zone, a.sources) < std::tie(b.function, b.zone, b.sources);
    }
  };
  mutable std::mutex mu_;
  std::map<Key, double, KeyLess> joules_;
  std::map<std::string, double, std::less<>> grams_;
};

void CollectBillerCounters(const EnergyBiller::Counters& counters, metrics::MetricWriter& w);

}  // namespace faasnode::billing
