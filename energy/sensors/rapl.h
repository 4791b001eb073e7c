// rapl.h — RAPL energy counters through libpowercap: every top-level instance (package) and
// its core, uncore, dram and psys zones where present.
//
//   auto rapl = energy::RaplSensor::Open();
//   if (!rapl) { /* kUnavailable: no /sys/class/powercap/intel-rapl; use the power model */ }
//   auto snap = rapl->Read();   // raw cumulative energy_uj of every zone, with its max range
//
// libpowercap reads /sys/class/powercap/intel-rapl/enabled, and for each instance N
// /sys/class/powercap/intel-rapl/intel-rapl:N/{name,enabled,energy_uj,max_energy_range_uj}
// and the sub-zones intel-rapl:N:M/ (it classifies sub-zones by their `name` file: core,
// uncore, dram, psys). It keeps the files open for the sensor's lifetime (fds are closed by
// the destructor).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "energy/sensors/counter.h"
#include "junction/base/error.h"

namespace energy {

// One zone RaplSensor found at Open().
struct RaplZoneInfo {
  uint32_t domain = 0;  // top-level instance index (intel-rapl:N)
  Zone zone = Zone::kPackage;
  std::string name;  // the zone's sysfs name, e.g. "package-0", "dram"
  Microjoules max_range;
};

// Move-only owner of libpowercap handles. Not thread-safe; one thread reads.
class RaplSensor final : public CounterSource {
 public:
  // Finds every RAPL instance and zone. Errors: kUnavailable when the machine has no RAPL
  // powercap tree (VMs, non-Intel/AMD without the driver) — use PowerModel instead; kIo when a
  // zone exists but its files cannot be opened or read (run as root or make energy_uj readable:
  // since 2020 kernels restrict it to root).
  static junction::Status<RaplSensor> Open();

  RaplSensor(RaplSensor&&) noexcept;
  RaplSensor& operator=(RaplSensor&&) noexcept;
  ~RaplSensor() override;

  // Reads energy_uj of every zone found at Open(). Errors: kIo naming the zone.
  junction::Status<CounterSnapshot> Read() override;
  Source source() const override { return Source::kRapl; }

  const std::vector<RaplZoneInfo>& zones() const;

 private:
  struct Impl;
  explicit RaplSensor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace energy
