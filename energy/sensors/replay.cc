// replay.cc — parsing and playing counter traces.
#include "energy/sensors/replay.h"

#include <fmt/format.h>
#include <charconv>
#include <fstream>
#include <sstream>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

template <typename T>
bool ParseInt(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Status<ReplaySensor> ReplaySensor::Parse(std::string_view text) {
  ReplaySensor sensor;
  size_t pos = 0;
  size_t line_no = 0;
  bool header_seen = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (!header_seen) {
      header_seen = true;
      if (line != kTraceHeader.substr(0, kTraceHeader.size() - 1)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("energy trace line {}: header must be '{}'", line_no,
                                     kTraceHeader.substr(0, kTraceHeader.size() - 1)));
      }
      continue;
    }
    auto fields = SplitCsv(line);
    auto bad = [&](std::string_view what) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("energy trace line {}: {} in '{}'; expected "
                                   "timestamp_ns,zone,domain,cumulative_uj,max_energy_range_uj",
                                   line_no, what, line));
    };
    if (fields.size() != 5) return bad(fmt::format("{} fields instead of 5", fields.size()));
    int64_t ts = 0;
    uint32_t domain = 0;
    uint64_t cumulative = 0;
    uint64_t range = 0;
    if (!ParseInt(fields[0], &ts)) return bad("bad timestamp_ns");
    auto zone = ParseZone(fields[1]);
    if (!zone) return bad(zone.error().message());
    if (!ParseInt(fields[2], &domain)) return bad("bad domain");
    if (!ParseInt(fields[3], &cumulative)) return bad("bad cumulative_uj");
    if (!fields[4].empty() && !ParseInt(fields[4], &range)) return bad("bad max_energy_range_uj");
    if (range != 0 && cumulative > range) return bad("cumulative_uj above max_energy_range_uj");
    if (sensor.snapshots_.empty() || sensor.snapshots_.back().timestamp_ns != ts) {
      if (!sensor.snapshots_.empty() && ts < sensor.snapshots_.back().timestamp_ns) {
        return bad("timestamp_ns decreases");
      }
      sensor.snapshots_.push_back(CounterSnapshot{ts, {}});
    }
    sensor.snapshots_.back().readings.push_back(CounterReading{
        CounterKey{Source::kReplay, *zone, domain}, Microjoules{cumulative}, Microjoules{range}});
  }
  if (sensor.snapshots_.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "energy trace has no readings: record at least two snapshots");
  }
  return sensor;
}

Status<ReplaySensor> ReplaySensor::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected(junction::Error::FromErrno(
        fmt::format("cannot open energy trace {}; check the path", path)));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  auto s = Parse(buf.str());
  if (!s) {
    return MakeError(s.error().code(), fmt::format("{}: {}", path, s.error().message()));
  }
  return s;
}

Status<CounterSnapshot> ReplaySensor::Read() {
  if (next_ >= snapshots_.size()) {
    return MakeError(ErrorCode::kClosed,
                     fmt::format("energy trace exhausted after {} snapshots; Rewind() to replay",
                                 snapshots_.size()));
  }
  return snapshots_[next_++];
}

void AppendTraceRows(const CounterSnapshot& snapshot, std::string* out) {
  for (const CounterReading& r : snapshot.readings) {
    *out += fmt::format("{},{},{},{},{}\n", snapshot.timestamp_ns, ZoneName(r.key.zone),
                        r.key.domain, r.cumulative.value, r.max_range.value);
  }
}

}  // namespace energy
