// power_model.h — an energy estimate for machines with no counter (VMs): a linear power model
// per core, idle watts at 0% utilisation to max watts at 100%, utilisation taken from the
// runtime's cycle accounts (busy + overhead cycles / elapsed cycles of the interval).
//
// Defaults are the Cloud Carbon Footprint methodology's averages for AWS (derived from
// SPECpower results over the micro-architectures AWS runs): 0.74 W per vCPU at idle and 3.5 W
// per vCPU at full load (https://www.cloudcarbonfootprint.org/docs/methodology/, "Compute").
// Figures carry Source::kModel: they are estimates, never labelled as measured.
//
//   auto model = energy::PowerModel::Create({});
//   energy::IntervalEnergy iv = model->Estimate(begin_ns, end_ns, cores);
#pragma once

#include <cstdint>
#include <span>

#include "energy/sensors/counter.h"
#include "energy/sensors/cycles.h"
#include "energy/sensors/units.h"
#include "junction/base/error.h"

namespace energy {

inline constexpr Watts kDefaultIdleWattsPerCore{0.74};  // CCF, AWS average min watts / vCPU
inline constexpr Watts kDefaultMaxWattsPerCore{3.5};    // CCF, AWS average max watts / vCPU

struct PowerModelOptions {
  Watts idle_per_core = kDefaultIdleWattsPerCore;
  Watts max_per_core = kDefaultMaxWattsPerCore;
};

// Immutable after Create(); safe to share between threads.
class PowerModel {
 public:
  // Errors: kInvalidArgument when a wattage is negative or not finite, or idle > max.
  static junction::Status<PowerModel> Create(const PowerModelOptions& options);

  // Utilisation of one core in [0, 1]: (overhead + busy cycles) / elapsed cycles, clamped;
  // 0 for an empty interval. Idle and unaccounted cycles count as not busy.
  static double Utilisation(const CoreIntervalCycles& core);

  // Energy of [begin_ns, end_ns] for the given cores: sum over cores of
  // (idle + (max - idle) * utilisation) * duration, in zone package, Source::kModel.
  // A negative duration counts as zero.
  IntervalEnergy Estimate(int64_t begin_ns, int64_t end_ns,
                          std::span<const CoreIntervalCycles> cores) const;

  const PowerModelOptions& options() const { return options_; }

 private:
  explicit PowerModel(const PowerModelOptions& options) : options_(options) {}
  PowerModelOptions options_;
};

}  // namespace energy
