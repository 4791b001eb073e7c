// energy_metrics.cc — per-function energy and carbon totals for /metrics.
#include "faasd-shim/billing/energy_metrics.h"

namespace faasnode::billing {

energy::SourceSet EnergyTotals::ZoneSourceSet(energy::Zone zone, energy::SourceSet sources) {
  if (zone == energy::Zone::kGpu && sources.Has(energy::Source::kNvml)) return energy::SourceSet(energy::Source::kNvml);
  energy::SourceSet cpu;
  for (energy::Source s : {energy::Source::kRapl, energy::Source::kModel, energy::Source::kReplay}) {
    if (sources.Has(s)) cpu.Add(s);
  }
  return cpu.empty() ? sources : cpu;
}

std::string EnergyTotals::ZoneSource(energy::Zone zone, energy::SourceSet sources) {
  return ZoneSourceSet(zone, sources).ToString();
}

void EnergyTotals::Add(std::span<const energy::InvocationRecord> rows) {
  std::lock_guard lock(mu_);
  // A node's rows come in runs of one function with one set of zones and sources: the run's
  // series are looked up once (std::map's values stay where they are), then only added to.
  const energy::InvocationRecord* run = nullptr;
  std::array<double*, energy::kZoneCount> zone_total{};
  double* grams_total = nullptr;
  for (const energy::InvocationRecord& r : rows) {
    const std::string_view function = r.function.view();
    if (run == nullptr || r.joules.present != run->joules.present ||
        r.joules.sources.bits() != run->joules.sources.bits() || function != run->function.view()) {
      run = &r;
      for (energy::Zone z : energy::kAllZones) {
        if (!r.joules.Has(z)) continue;
        const KeyView key{function, z, ZoneSourceSet(z, r.joules.sources).bits()};
        auto it = joules_.find(key);
        if (it == joules_.end()) it = joules_.emplace(Key{std::string(function), z, key.sources}, 0.0).first;
        zone_total[static_cast<std::size_t>(z)] = &it->second;
      }
      auto g = grams_.find(function);
      if (g == grams_.end()) g = grams_.emplace(std::string(function), 0.0).first;
      grams_total = &g->second;
    }
    for (energy::Zone z : energy::kAllZones) {
      if (r.joules.Has(z)) *zone_total[static_cast<std::size_t>(z)] += r.joules[z].value;
    }
    *grams_total += r.grams;
  }
}

void EnergyTotals::Collect(metrics::MetricWriter& w) const {
  std::lock_guard lock(mu_);
  w.Family("faasnode_energy_joules_total", "counter",
           "Joules billed to each function's invocations, by zone and by the source of the figure.");
  for (const auto& [key, joules] : joules_) {
    const std::string zone(energy::ZoneName(key.zone));
    const std::string source = energy::SourceSet::FromBits(key.sources).ToString();
    w.Sample({{"function", key.function}, {"zone", zone}, {"source", source}}, joules);
  }
  w.Family("faasnode_carbon_grams_total", "counter", "Operational gCO2e billed to each function's invocations.");
  for (const auto& [function, grams] : grams_) w.Sample({{"function", function}}, grams);
}

void CollectBillerCounters(const EnergyBiller::Counters& c, metrics::MetricWriter& w) {
  w.Family("faasnode_ledger_records_aggregated_total", "counter",
           "Invocation rows folded into the ledger's overflow_aggregates because its queue was full (not lost).");
  w.Sample({}, static_cast<double>(c.ledger_aggregated));
  w.Family("faasnode_ledger_rows_written_total", "counter", "Invocation rows committed to the energy ledger.");
  w.Sample({}, static_cast<double>(c.ledger_rows));
  w.Family("faasnode_ledger_records_packed_total", "counter",
           "Invocation records the ledger writer kept in packs while it was behind (expanded into rows later).");
  w.Sample({}, static_cast<double>(c.ledger_packed));
  w.Family("faasnode_ledger_packs_pending", "gauge", "Ledger packs not yet expanded into invocation rows.");
  w.Sample({}, static_cast<double>(c.ledger_packs_pending));
  w.Family("faasnode_ledger_rows_lost_total", "counter",
           "Invocation rows lost in crashes of the node, as detected at start from sequence-number gaps.");
  w.Sample({}, static_cast<double>(c.ledger_rows_lost));
  w.Family("faasnode_billing_calls_spilled_total", "counter",
           "Finished calls that found their core's billing ring full (kept; the sampler is behind).");
  w.Sample({}, static_cast<double>(c.calls_spilled));
}

}  // namespace faasnode::billing
