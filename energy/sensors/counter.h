// counter.h — raw cumulative energy counters with timestamps (what sensors produce), and the
// IntervalMeter that derives per-interval joules from successive snapshots, wrap-corrected.
//
// Measurement is kept apart from presentation: a CounterSource only reads counters; figures
// (joules per interval and zone) are derived here from deltas, never from the raw values.
//
//   auto rapl = RaplSensor::Open();            // or NvmlSensor, ReplaySensor
//   IntervalMeter meter;
//   auto first = meter.Add(*rapl->Read());     // baseline: returns no interval
//   auto iv = meter.Add(*rapl->Read());        // IntervalEnergy for [first, now]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "energy/sensors/units.h"
#include "energy/sensors/zones.h"
#include "junction/base/error.h"

namespace energy {

// Identifies one counter: its source, its zone and the domain (RAPL top-level instance or GPU
// index) it belongs to.
struct CounterKey {
  Source source = Source::kRapl;
  Zone zone = Zone::kPackage;
  uint32_t domain = 0;
  friend bool operator==(const CounterKey&, const CounterKey&) = default;
};

// One raw reading of a cumulative counter. max_range is the value at which the counter wraps
// back to 0 (RAPL's max_energy_range_uj); 0 means "does not wrap" (NVML's 64-bit counter).
struct CounterReading {
  CounterKey key;
  Microjoules cumulative;
  Microjoules max_range;
};

// All counters of one source read at (about) one instant.
struct CounterSnapshot {
  int64_t timestamp_ns = 0;  // UTC
  std::vector<CounterReading> readings;
};

// A sensor that reads cumulative counters. Implementations: RaplSensor, NvmlSensor,
// ReplaySensor. Not thread-safe: one thread reads a given source.
class CounterSource {
 public:
  virtual ~CounterSource() = default;
  // Reads every counter now. Does not block beyond the reads themselves (sysfs/NVML calls).
  // Errors: kIo when a counter cannot be read, kClosed when a replay trace is exhausted.
  virtual junction::Status<CounterSnapshot> Read() = 0;
  virtual Source source() const = 0;
};

// The energy of one interval, by zone, derived from two snapshots.
struct IntervalEnergy {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  ZoneJoules joules;   // summed over domains (e.g. all packages) per zone
  uint32_t wraps = 0;  // counters that wrapped during this interval (corrected)
};

// The delta of a cumulative counter from `prev` to `cur`. When cur < prev and max_range is
// known, the counter wrapped once: (max_range - prev) + cur. Errors (kInvalidArgument) when it
// went backwards with no max_range, or when a value exceeds max_range: the counter was reset
// or the reading is bogus; at most one wrap per interval can be detected, so sample more often
// than the counter's wrap time (minutes for RAPL at full power).
junction::Status<Microjoules> WrapDelta(Microjoules prev, Microjoules cur, Microjoules max_range);

// Derives IntervalEnergy from successive snapshots of one or more sources. Not thread-safe.
// A counter seen for the first time only sets its baseline; a counter that disappears is an
// error (kNotFound). No interval is dropped: a wrap is corrected, never skipped.
class IntervalMeter {
 public:
  // Feeds the next snapshot. Returns std::nullopt for the first snapshot (the baseline), the
  // interval since the previous snapshot otherwise. On error the meter keeps its previous
  // state, so the caller may retry with a fresh snapshot without losing the interval.
  junction::Status<std::optional<IntervalEnergy>> Add(const CounterSnapshot& snapshot);

  uint64_t total_wraps() const { return total_wraps_; }

 private:
  struct Last {
    CounterKey key;
    Microjoules value;
  };
  std::vector<Last> last_;
  int64_t last_ns_ = 0;
  bool has_baseline_ = false;
  uint64_t total_wraps_ = 0;
};

}  // namespace energy
