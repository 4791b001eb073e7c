// zones.h — energy zones (package, core, uncore, dram, psys, gpu), figure sources, and the
// per-zone joule vector that every derived figure travels in.
//
// Zones overlap: core and uncore are parts of package; psys (platform) covers package and more.
// ZoneJoules::NodeTotal() applies the one rule used everywhere to avoid double counting:
// psys + gpu when psys is present, else package + dram + gpu.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "energy/sensors/units.h"
#include "junction/base/error.h"

namespace energy {

enum class Zone : uint8_t { kPackage, kCore, kUncore, kDram, kPsys, kGpu };
inline constexpr size_t kZoneCount = 6;
inline constexpr std::array<Zone, kZoneCount> kAllZones = {
    Zone::kPackage, Zone::kCore, Zone::kUncore, Zone::kDram, Zone::kPsys, Zone::kGpu};

// "package", "core", "uncore", "dram", "psys", "gpu".
std::string_view ZoneName(Zone zone);
// Inverse of ZoneName; kInvalidArgument naming the accepted names otherwise.
junction::Status<Zone> ParseZone(std::string_view name);

// Where a figure came from: a hardware counter (rapl, nvml), an estimate (model), or a
// recorded counter trace played back (replay).
enum class Source : uint8_t { kRapl, kNvml, kModel, kReplay };
std::string_view SourceName(Source source);
junction::Status<Source> ParseSource(std::string_view name);

// A set of sources (a figure for several zones may mix rapl and nvml).
class SourceSet {
 public:
  constexpr SourceSet() = default;
  constexpr explicit SourceSet(Source s) : bits_(Bit(s)) {}
  static constexpr SourceSet FromBits(uint8_t bits) { return SourceSet(bits, 0); }
  constexpr void Add(Source s) { bits_ |= Bit(s); }
  constexpr void Add(SourceSet o) { bits_ |= o.bits_; }
  constexpr bool Has(Source s) const { return (bits_ & Bit(s)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint8_t bits() const { return bits_; }
  // "rapl", "rapl+nvml", ... ("none" when empty).
  std::string ToString() const;
  // The same text from a table made once: no allocation (it goes out on every invocation reply).
  std::string_view Name() const;
  friend constexpr bool operator==(SourceSet, SourceSet) = default;

 private:
  constexpr SourceSet(uint8_t bits, int) : bits_(bits) {}
  static constexpr uint8_t Bit(Source s) { return static_cast<uint8_t>(1u << static_cast<int>(s)); }
  uint8_t bits_ = 0;
};

// Joules per zone, with which zones are present and which sources produced them.
struct ZoneJoules {
  std::array<Joules, kZoneCount> by_zone{};
  uint8_t present = 0;  // bit i set: zone i has a figure
  SourceSet sources;

  Joules operator[](Zone z) const { return by_zone[static_cast<size_t>(z)]; }
  bool Has(Zone z) const { return (present >> static_cast<int>(z)) & 1; }
  void Set(Zone z, Joules j) {
    by_zone[static_cast<size_t>(z)] = j;
    present |= static_cast<uint8_t>(1u << static_cast<int>(z));
  }
  void Add(Zone z, Joules j) { Set(z, (*this)[z] + j); }
  // Adds every present zone of `o` (scaled by k) into this one; merges presence and sources.
  // Inline, over the present zones only: the sampler runs it several times per call.
  void AddScaled(const ZoneJoules& o, double k) {
    for (unsigned bits = o.present; bits != 0; bits &= bits - 1) {
      const int z = __builtin_ctz(bits);
      by_zone[static_cast<size_t>(z)].value += o.by_zone[static_cast<size_t>(z)].value * k;
    }
    present |= o.present;
    sources.Add(o.sources);
  }
  // psys + gpu when psys is present, else package + dram + gpu (see the file comment).
  Joules NodeTotal() const;
};

}  // namespace energy
