// energy_metrics.h — the energy bill as Prometheus series, summed from the ledger rows the
// biller writes (BillingOptions::on_bill):
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
//   options.on_bill = [&](const energy::InvocationRecord& r) { totals.Add(r); };
//   registry.Add([&](metrics::MetricWriter& w) { totals.Collect(w); });
//
// Threads: Add from one thread at a time (the sampler); Collect from any thread. A mutex held
// for a map update or a scrape's copy: neither is on the data path.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "energy/ledger/record.h"
#include "faasd-shim/metrics/registry.h"

namespace faasnode::billing {

class EnergyTotals {
 public:
  void Add(const energy::InvocationRecord& record);
  void Collect(metrics::MetricWriter& w) const;

  // The source label of one zone of a row: gpu figures come from nvml when the row has it,
  // the other zones from the CPU-side meter (the row's sources without nvml).
  static std::string ZoneSource(energy::Zone zone, energy::SourceSet sources);

 private:
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string>, double> joules_;  // function, zone, source
  std::map<std::string, double> grams_;
};

}  // namespace faasnode::billing
