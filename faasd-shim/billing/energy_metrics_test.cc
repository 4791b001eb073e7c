// energy_metrics_test.cc — the Prometheus series sum the billed rows per function, zone and
// source, and per function in grams.
#include "faasd-shim/billing/energy_metrics.h"

#include <gtest/gtest.h>

#include <vector>

namespace faasnode::billing {
namespace {

energy::InvocationRecord Row(std::string_view fn, double package_j, double gpu_j, double grams) {
  energy::InvocationRecord r;
  r.function.Assign(fn);
  r.joules.Set(energy::Zone::kPackage, energy::Joules{package_j});
  r.joules.sources.Add(energy::Source::kRapl);
  if (gpu_j > 0) {
    r.joules.Set(energy::Zone::kGpu, energy::Joules{gpu_j});
    r.joules.sources.Add(energy::Source::kNvml);
  }
  r.grams = grams;
  return r;
}

TEST(EnergyTotals, SeriesSumRowsPerFunctionZoneAndSource) {
  EnergyTotals t;
  t.Add(Row("echo", 0.25, 0, 0.125));
  t.Add(Row("echo", 0.5, 0, 0.25));
  t.Add(Row("mlp", 1.0, 3.0, 4e-4));
  std::string out;
  metrics::MetricWriter w(out);
  t.Collect(w);
  EXPECT_NE(out.find("# TYPE faasnode_energy_joules_total counter"), std::string::npos) << out;
  EXPECT_NE(out.find("faasnode_energy_joules_total{function=\"echo\",zone=\"package\",source=\"rapl\"} 0.75"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("faasnode_energy_joules_total{function=\"mlp\",zone=\"gpu\",source=\"nvml\"} 3"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("faasnode_energy_joules_total{function=\"mlp\",zone=\"package\",source=\"rapl\"} 1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("faasnode_carbon_grams_total{function=\"echo\"} 0.375"), std::string::npos) << out;
  EXPECT_EQ(EnergyTotals::ZoneSource(energy::Zone::kGpu, energy::SourceSet(energy::Source::kModel)), "model");
}

// An interval's rows in one call: runs of one function share a lookup, and a change of
// function, of zones or of sources inside the batch starts a new run.
TEST(EnergyTotals, ABatchSumsEachRowIntoItsOwnSeries) {
  EnergyTotals t;
  energy::InvocationRecord modelled = Row("echo", 2.0, 0, 1.0);
  modelled.joules.sources = energy::SourceSet(energy::Source::kModel);
  const std::vector<energy::InvocationRecord> rows = {
      Row("echo", 0.25, 0, 0.125), Row("echo", 0.5, 0, 0.25), Row("mlp", 1.0, 3.0, 4e-4),
      Row("mlp", 1.0, 0, 1e-4),    Row("echo", 0.25, 0, 0.125), modelled};
  t.Add(rows);
  std::string out;
  metrics::MetricWriter w(out);
  t.Collect(w);
  for (const char* want : {"faasnode_energy_joules_total{function=\"echo\",zone=\"package\",source=\"rapl\"} 1\n",
                           "faasnode_energy_joules_total{function=\"echo\",zone=\"package\",source=\"model\"} 2\n",
                           "faasnode_energy_joules_total{function=\"mlp\",zone=\"package\",source=\"rapl\"} 2\n",
                           "faasnode_energy_joules_total{function=\"mlp\",zone=\"gpu\",source=\"nvml\"} 3\n",
                           "faasnode_carbon_grams_total{function=\"echo\"} 1.5\n",
                           "faasnode_carbon_grams_total{function=\"mlp\"} 0.0005\n"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << " in\n" << out;
  }
}

}  // namespace
}  // namespace faasnode::billing
