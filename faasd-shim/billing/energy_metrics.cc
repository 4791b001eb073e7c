// energy_metrics.cc — per-function energy and carbon totals for /metrics.
#include "faasd-shim/billing/energy_metrics.h"

namespace faasnode::billing {

std::string EnergyTotals::ZoneSource(energy::Zone zone, energy::SourceSet sources) {
  if (zone == energy::Zone::kGpu && sources.Has(energy::Source::kNvml)) return "nvml";
  energy::SourceSet cpu;
  for (energy::Source s : {energy::Source::kRapl, energy::Source::kModel, energy::Source::kReplay}) {
    if (sources.Has(s)) cpu.Add(s);
  }
  return (cpu.empty() ? sources : cpu).ToString();
}

void EnergyTotals::Add(const energy::InvocationRecord& r) {
  const std::string function(r.function.view());
  std::lock_guard lock(mu_);
  for (energy::Zone z : energy::kAllZones) {
    if (!r.joules.Has(z)) continue;
    joules_[{function, std::string(energy::ZoneName(z)), ZoneSource(z, r.joules.sources)}] += r.joules[z].value;
  }
  grams_[function] += r.grams;
}

void EnergyTotals::Collect(metrics::MetricWriter& w) const {
  std::lock_guard lock(mu_);
  w.Family("faasnode_energy_joules_total", "counter",
           "Joules billed to each function's invocations, by zone and by the source of the figure.");
  for (const auto& [key, joules] : joules_) {
    const auto& [function, zone, source] = key;
    w.Sample({{"function", function}, {"zone", zone}, {"source", source}}, joules);
  }
  w.Family("faasnode_carbon_grams_total", "counter", "Operational gCO2e billed to each function's invocations.");
  for (const auto& [function, grams] : grams_) w.Sample({{"function", function}}, grams);
}

}  // namespace faasnode::billing
