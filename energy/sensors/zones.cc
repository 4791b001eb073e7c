// zones.cc — names and parsing for zones and sources; ZoneJoules arithmetic.
#include "energy/sensors/zones.h"

#include <fmt/format.h>

namespace energy {

std::string_view ZoneName(Zone zone) {
  switch (zone) {
    case Zone::kPackage:
      return "package";
    case Zone::kCore:
      return "core";
    case Zone::kUncore:
      return "uncore";
    case Zone::kDram:
      return "dram";
    case Zone::kPsys:
      return "psys";
    case Zone::kGpu:
      return "gpu";
  }
  return "unknown";
}

junction::Status<Zone> ParseZone(std::string_view name) {
  for (Zone z : kAllZones) {
    if (ZoneName(z) == name) return z;
  }
  return junction::MakeError(
      junction::ErrorCode::kInvalidArgument,
      fmt::format("unknown energy zone '{}': use one of package, core, uncore, dram, psys, gpu",
                  name));
}

std::string_view SourceName(Source source) {
  switch (source) {
    case Source::kRapl:
      return "rapl";
    case Source::kNvml:
      return "nvml";
    case Source::kModel:
      return "model";
    case Source::kReplay:
      return "replay";
  }
  return "unknown";
}

junction::Status<Source> ParseSource(std::string_view name) {
  for (Source s : {Source::kRapl, Source::kNvml, Source::kModel, Source::kReplay}) {
    if (SourceName(s) == name) return s;
  }
  return junction::MakeError(
      junction::ErrorCode::kInvalidArgument,
      fmt::format("unknown energy source '{}': use one of rapl, nvml, model, replay", name));
}

std::string SourceSet::ToString() const {
  std::string out;
  for (Source s : {Source::kRapl, Source::kNvml, Source::kModel, Source::kReplay}) {
    if (!Has(s)) continue;
    if (!out.empty()) out += '+';
    out += SourceName(s);
  }
  return out.empty() ? "none" : out;
}

std::string_view SourceSet::Name() const {
  static_assert(static_cast<int>(Source::kReplay) == 3, "the table covers four sources");
  static const std::array<std::string, 16> kNames = [] {
    std::array<std::string, 16> t;
    for (uint8_t b = 0; b < 16; ++b) t[b] = FromBits(b).ToString();
    return t;
  }();
  return kNames[bits_ & 15u];
}

Joules ZoneJoules::NodeTotal() const {
  if (Has(Zone::kPsys)) return (*this)[Zone::kPsys] + (*this)[Zone::kGpu];
  return (*this)[Zone::kPackage] + (*this)[Zone::kDram] + (*this)[Zone::kGpu];
}

}  // namespace energy
