// replay.h — ReplaySensor: plays back a recorded counter trace, for tests and re-billing.
//
// Trace format (CSV, UTF-8, '#' lines are comments, a header line is required):
//
//   timestamp_ns,zone,domain,cumulative_uj,max_energy_range_uj
//   1700000000000000000,package,0,123456789,262143328850
//   1700000000000000000,dram,0,4567,65712999613
//   1700000000010000000,package,0,123556789,262143328850
//
// timestamp_ns: UTC nanoseconds; consecutive rows with the same timestamp form one snapshot and
// timestamps must not decrease. zone: package|core|uncore|dram|psys|gpu. domain: RAPL instance
// or GPU index. cumulative_uj: the raw counter. max_energy_range_uj: where the counter wraps
// (empty or 0: does not wrap). AppendTraceRows() writes this format from live snapshots.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "energy/sensors/counter.h"
#include "junction/base/error.h"

namespace energy {

// Value type; not thread-safe. Readings carry Source::kReplay whatever recorded them.
class ReplaySensor final : public CounterSource {
 public:
  // Errors: kInvalidArgument naming the line and what is wrong with it; kNotFound/kIo for the
  // file; kInvalidArgument for a trace with no snapshot.
  static junction::Status<ReplaySensor> Parse(std::string_view text);
  static junction::Status<ReplaySensor> Load(const std::string& path);

  // The next snapshot; kClosed once the trace is exhausted (Rewind() to play it again).
  junction::Status<CounterSnapshot> Read() override;
  Source source() const override { return Source::kReplay; }

  void Rewind() { next_ = 0; }
  size_t size() const { return snapshots_.size(); }
  const std::vector<CounterSnapshot>& snapshots() const { return snapshots_; }

 private:
  std::vector<CounterSnapshot> snapshots_;
  size_t next_ = 0;
};

inline constexpr std::string_view kTraceHeader =
    "timestamp_ns,zone,domain,cumulative_uj,max_energy_range_uj\n";

// Appends one CSV row per reading of `snapshot` to `out` (no header; write kTraceHeader first).
void AppendTraceRows(const CounterSnapshot& snapshot, std::string* out);

}  // namespace energy
