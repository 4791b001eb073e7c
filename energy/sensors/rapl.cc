// rapl.cc — RaplSensor over libpowercap's powercap-rapl interface.
#include "energy/sensors/rapl.h"

#include <powercap/powercap-rapl.h>

#include <fmt/format.h>
#include <cerrno>
#include <ctime>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct ZoneMap {
  powercap_rapl_zone pc;
  Zone zone;
};
constexpr ZoneMap kZoneMap[] = {
    {POWERCAP_RAPL_ZONE_PACKAGE, Zone::kPackage}, {POWERCAP_RAPL_ZONE_CORE, Zone::kCore},
    {POWERCAP_RAPL_ZONE_UNCORE, Zone::kUncore},   {POWERCAP_RAPL_ZONE_DRAM, Zone::kDram},
    {POWERCAP_RAPL_ZONE_PSYS, Zone::kPsys},
};

powercap_rapl_zone ToPowercap(Zone z) {
  for (const ZoneMap& m : kZoneMap) {
    if (m.zone == z) return m.pc;
  }
  return POWERCAP_RAPL_ZONE_PACKAGE;
}

}  // namespace

struct RaplSensor::Impl {
  std::vector<powercap_rapl_pkg> pkgs;
  std::vector<RaplZoneInfo> zones;

  ~Impl() {
    for (powercap_rapl_pkg& p : pkgs) powercap_rapl_destroy(&p);
  }
};

RaplSensor::RaplSensor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RaplSensor::RaplSensor(RaplSensor&&) noexcept = default;
RaplSensor& RaplSensor::operator=(RaplSensor&&) noexcept = default;
RaplSensor::~RaplSensor() = default;

const std::vector<RaplZoneInfo>& RaplSensor::zones() const {
  return impl_->zones;
}

Status<RaplSensor> RaplSensor::Open() {
  if (powercap_rapl_control_is_supported() != 1) {
    return MakeError(ErrorCode::kUnavailable,
                     "no RAPL powercap tree (/sys/class/powercap/intel-rapl is absent): this "
                     "machine has no energy counter; configure the power model instead");
  }
  errno = 0;
  uint32_t n = powercap_rapl_get_num_instances();
  if (n == 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "RAPL powercap control exists but has no instance (intel-rapl:N): no "
                     "energy counter to read; configure the power model instead");
  }
  auto impl = std::make_unique<Impl>();
  impl->pkgs.reserve(n);
  for (uint32_t id = 0; id < n; ++id) {
    powercap_rapl_pkg pkg;
    if (powercap_rapl_init(id, &pkg, /*read_only=*/1) != 0) {
      return std::unexpected(junction::Error::FromErrno(
          fmt::format("powercap_rapl_init(intel-rapl:{}) failed; check that "
                      "/sys/class/powercap/intel-rapl/intel-rapl:{}/energy_uj is readable "
                      "(root only on kernels since 2020)",
                      id, id)));
    }
    impl->pkgs.push_back(pkg);
    for (const ZoneMap& m : kZoneMap) {
      if (powercap_rapl_is_zone_supported(&impl->pkgs.back(), m.pc) != 1) continue;
      RaplZoneInfo info;
      info.domain = id;
      info.zone = m.zone;
      char name[64] = {0};
      ssize_t len = powercap_rapl_get_name(&impl->pkgs.back(), m.pc, name, sizeof(name));
      if (len > 0) {
        info.name.assign(name, static_cast<size_t>(len));
        while (!info.name.empty() && (info.name.back() == '\n' || info.name.back() == '\0')) {
          info.name.pop_back();
        }
      }
      uint64_t range = 0;
      if (powercap_rapl_get_max_energy_range_uj(&impl->pkgs.back(), m.pc, &range) != 0 ||
          range == 0) {
        return std::unexpected(junction::Error::FromErrno(fmt::format(
            "reading max_energy_range_uj of RAPL zone {} (intel-rapl:{}) failed: without it "
            "counter wraps cannot be corrected; check the powercap sysfs files",
            ZoneName(m.zone), id)));
      }
      info.max_range = Microjoules{range};
      impl->zones.push_back(std::move(info));
    }
  }
  return RaplSensor(std::move(impl));
}

Status<CounterSnapshot> RaplSensor::Read() {
  CounterSnapshot snap;
  snap.readings.reserve(impl_->zones.size());
  snap.timestamp_ns = RealtimeNs();
  for (const RaplZoneInfo& z : impl_->zones) {
    uint64_t value = 0;
    if (powercap_rapl_get_energy_uj(&impl_->pkgs[z.domain], ToPowercap(z.zone), &value) != 0) {
      return std::unexpected(junction::Error::FromErrno(
          fmt::format("reading energy_uj of RAPL zone {} (intel-rapl:{}) failed; check the "
                      "powercap sysfs files",
                      ZoneName(z.zone), z.domain)));
    }
    snap.readings.push_back(CounterReading{CounterKey{Source::kRapl, z.zone, z.domain},
                                           Microjoules{value}, z.max_range});
  }
  return snap;
}

}  // namespace energy
