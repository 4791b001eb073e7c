// units.h — strong unit types for energy figures: Joules, Microjoules, Watts.
//
// Raw counters are integral microjoules (what RAPL and, scaled, NVML report); derived figures
// are floating-point joules. The types do not convert implicitly, so a microjoule counter can
// never be added to a joule figure by mistake. Times are plain int64 nanoseconds in fields
// named `*_ns` (UTC, CLOCK_REALTIME, unless a field says otherwise).
#pragma once

#include <compare>
#include <cstdint>

namespace energy {

// An energy amount in joules (derived figures). Value type, trivially copyable.
struct Joules {
  double value = 0.0;

  constexpr Joules& operator+=(Joules o) {
    value += o.value;
    return *this;
  }
  constexpr Joules& operator-=(Joules o) {
    value -= o.value;
    return *this;
  }
  friend constexpr Joules operator+(Joules a, Joules b) { return Joules{a.value + b.value}; }
  friend constexpr Joules operator-(Joules a, Joules b) { return Joules{a.value - b.value}; }
  friend constexpr Joules operator*(Joules a, double k) { return Joules{a.value * k}; }
  friend constexpr Joules operator*(double k, Joules a) { return Joules{a.value * k}; }
  friend constexpr auto operator<=>(Joules a, Joules b) = default;
};

// A raw counter value or delta in microjoules (what RAPL's energy_uj holds).
struct Microjoules {
  uint64_t value = 0;

  constexpr Joules ToJoules() const { return Joules{static_cast<double>(value) * 1e-6}; }
  friend constexpr auto operator<=>(Microjoules a, Microjoules b) = default;
};

// A power in watts (joules per second).
struct Watts {
  double value = 0.0;

  // Energy of this power held for `ns` nanoseconds.
  constexpr Joules Over(int64_t ns) const { return Joules{value * static_cast<double>(ns) * 1e-9}; }
  friend constexpr auto operator<=>(Watts a, Watts b) = default;
};

}  // namespace energy
