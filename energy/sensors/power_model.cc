// power_model.cc — the linear per-core power model.
#include "energy/sensors/power_model.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

namespace energy {

junction::Status<PowerModel> PowerModel::Create(const PowerModelOptions& options) {
  double idle = options.idle_per_core.value;
  double max = options.max_per_core.value;
  if (!std::isfinite(idle) || !std::isfinite(max) || idle < 0 || max < 0 || idle > max) {
    return junction::MakeError(
        junction::ErrorCode::kInvalidArgument,
        fmt::format("power model: idle {} W and max {} W per core must be finite, >= 0 and "
                    "idle <= max; fix energy.model in the config (defaults 0.74 and 3.5)",
                    idle, max));
  }
  return PowerModel(options);
}

double PowerModel::Utilisation(const CoreIntervalCycles& core) {
  uint64_t elapsed = core.ElapsedCycles();
  if (elapsed == 0) return 0.0;
  double busy = static_cast<double>(core.overhead_cycles + core.BusyCycles());
  return std::clamp(busy / static_cast<double>(elapsed), 0.0, 1.0);
}

IntervalEnergy PowerModel::Estimate(int64_t begin_ns, int64_t end_ns,
                                    std::span<const CoreIntervalCycles> cores) const {
  IntervalEnergy iv;
  iv.begin_ns = begin_ns;
  iv.end_ns = end_ns;
  int64_t dt = std::max<int64_t>(0, end_ns - begin_ns);
  Joules total;
  for (const CoreIntervalCycles& c : cores) {
    double u = Utilisation(c);
    Watts w{options_.idle_per_core.value +
            (options_.max_per_core.value - options_.idle_per_core.value) * u};
    total += w.Over(dt);
  }
  iv.joules.Set(Zone::kPackage, total);
  iv.joules.sources.Add(Source::kModel);
  return iv;
}

}  // namespace energy
