// record.h — the fixed-size records the data path hands to the ledger: one per invocation and
// one per sampling interval. Trivially copyable, no heap: pushing one never allocates.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "energy/attribution/attribution.h"
#include "energy/carbon/intensity.h"
#include "energy/sensors/zones.h"

namespace energy {

// A string of at most N bytes stored inline. Longer input is truncated (Assign says so).
template <size_t N>
class FixedString {
  static_assert(N > 0 && N < 256);

 public:
  // Returns false when `s` was longer than N and was truncated.
  bool Assign(std::string_view s) {
    size_ = static_cast<uint8_t>(std::min(s.size(), N));
    std::memcpy(data_, s.data(), size_);
    return s.size() <= N;
  }
  std::string_view view() const { return std::string_view(data_, size_); }
  friend bool operator==(const FixedString& a, const FixedString& b) {
    return a.view() == b.view();
  }

 private:
  char data_[N] = {};
  uint8_t size_ = 0;
};

// One invocation's final bill. `seq` is assigned by Ledger::Push / PushMany (what a caller
// sets is overwritten).
struct InvocationRecord {
  uint64_t seq = 0;
  FixedString<64> call_id;
  FixedString<64> function;
  FixedString<64> ns;  // the function's namespace
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t cycles = 0;
  ZoneJoules joules;  // with its sources
  double grams = 0.0;
  double intensity_g_per_kwh = 0.0;
  carbon::IntensityKind intensity_kind = carbon::IntensityKind::kConstant;
  double embodied_grams = 0.0;
  int32_t status = 0;  // HTTP status of the invocation
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;

  // Copies the figures of `bill` (cycles, joules, grams, intensity, embodied) into this record.
  void FillFromBill(const Bill& bill) {
    cycles = bill.cycles;
    joules = bill.joules;
    grams = bill.grams;
    intensity_g_per_kwh = bill.MeanIntensity();
    intensity_kind = bill.intensity_kind;
    embodied_grams = bill.embodied_grams;
  }
};

// One sampling interval, for audit: the meter by zone and the joules of each account class
// (node totals, ZoneJoules::NodeTotal()).
struct IntervalRecord {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  ZoneJoules meter;
  double invocations_j = 0.0;
  double idle_j = 0.0;
  double overhead_j = 0.0;
  double unaccounted_j = 0.0;
  uint32_t accounts = 0;  // invocation accounts in the interval
  uint32_t merged = 1;    // intervals folded into this row (>1 only after a full queue)
  // Carbon of each class at the interval's mean intensity (grams = J / 3.6e6 × intensity);
  // priced = false when the interval could not be priced (the grams columns are then NULL).
  bool priced = false;
  double intensity_g_per_kwh = 0.0;
  double meter_grams = 0.0;
  double invocations_grams = 0.0;
  double idle_grams = 0.0;
  double overhead_grams = 0.0;
  double unaccounted_grams = 0.0;

  // Prices every class at `g_per_kwh` (the interval's mean intensity).
  void Price(double g_per_kwh) {
    priced = true;
    intensity_g_per_kwh = g_per_kwh;
    meter_grams = carbon::Grams(meter.NodeTotal(), g_per_kwh);
    invocations_grams = carbon::Grams(Joules{invocations_j}, g_per_kwh);
    idle_grams = carbon::Grams(Joules{idle_j}, g_per_kwh);
    overhead_grams = carbon::Grams(Joules{overhead_j}, g_per_kwh);
    unaccounted_grams = carbon::Grams(Joules{unaccounted_j}, g_per_kwh);
  }

  // `invocation_total` is a.InvocationTotal(), which the caller has summed already (a pass
  // over every share of the interval).
  static IntervalRecord From(const IntervalAttribution& a, const ZoneJoules& invocation_total) {
    IntervalRecord r;
    r.begin_ns = a.begin_ns;
    r.end_ns = a.end_ns;
    r.meter = a.meter;
    r.invocations_j = invocation_total.NodeTotal().value;
    r.idle_j = a.idle.NodeTotal().value;
    r.overhead_j = a.overhead.NodeTotal().value;
    r.unaccounted_j = a.unaccounted.NodeTotal().value;
    r.accounts = static_cast<uint32_t>(a.invocations.size());
    return r;
  }
};

}  // namespace energy
