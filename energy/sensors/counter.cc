// counter.cc — wrap-corrected deltas and the IntervalMeter.
#include "energy/sensors/counter.h"

#include <fmt/format.h>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

Status<Microjoules> WrapDelta(Microjoules prev, Microjoules cur, Microjoules max_range) {
  if (max_range.value != 0 && (cur.value > max_range.value || prev.value > max_range.value)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("energy counter value {} or {} exceeds its max_energy_range_uj "
                                 "{}: the reading is bogus; check the sensor",
                                 prev.value, cur.value, max_range.value));
  }
  if (cur.value >= prev.value) return Microjoules{cur.value - prev.value};
  if (max_range.value == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("energy counter went backwards ({} -> {}) and has no max range: "
                                 "the counter was reset; restart the meter from a new baseline",
                                 prev.value, cur.value));
  }
  return Microjoules{(max_range.value - prev.value) + cur.value};
}

Status<std::optional<IntervalEnergy>> IntervalMeter::Add(const CounterSnapshot& snapshot) {
  if (has_baseline_ && snapshot.timestamp_ns < last_ns_) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("energy snapshot at {} ns is older than the previous one at {} "
                                 "ns: feed snapshots in time order",
                                 snapshot.timestamp_ns, last_ns_));
  }
  IntervalEnergy iv;
  iv.begin_ns = last_ns_;
  iv.end_ns = snapshot.timestamp_ns;
  std::vector<Last> next;
  next.reserve(snapshot.readings.size());
  size_t matched = 0;
  for (const CounterReading& r : snapshot.readings) {
    next.push_back(Last{r.key, r.cumulative});
    const Last* prev = nullptr;
    for (const Last& l : last_) {
      if (l.key == r.key) {
        prev = &l;
        break;
      }
    }
    if (prev == nullptr) continue;  // new counter: baseline only
    ++matched;
    auto delta = WrapDelta(prev->value, r.cumulative, r.max_range);
    if (!delta) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{} {} domain {}: {}", SourceName(r.key.source),
                                   ZoneName(r.key.zone), r.key.domain, delta.error().message()));
    }
    if (r.cumulative.value < prev->value.value) ++iv.wraps;
    iv.joules.Add(r.key.zone, delta->ToJoules());
    iv.joules.sources.Add(r.key.source);
  }
  if (has_baseline_ && matched != last_.size()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("{} of {} energy counters disappeared between snapshots: a "
                                 "sensor lost a zone; reopen the sensor",
                                 last_.size() - matched, last_.size()));
  }
  bool first = !has_baseline_;
  last_ = std::move(next);
  last_ns_ = snapshot.timestamp_ns;
  has_baseline_ = true;
  if (first) return std::optional<IntervalEnergy>{};
  total_wraps_ += iv.wraps;
  return std::optional<IntervalEnergy>{iv};
}

}  // namespace energy
