// intensity.cc — carbon-intensity traces, lookups with gap handling, and the CarbonModel.
#include "energy/carbon/intensity.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace energy::carbon {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::string_view IntensityKindName(IntensityKind kind) {
  switch (kind) {
    case IntensityKind::kMeasured:
      return "measured";
    case IntensityKind::kHeld:
      return "held";
    case IntensityKind::kInterpolated:
      return "interpolated";
    case IntensityKind::kConstant:
      return "constant";
  }
  return "unknown";
}

IntensityKind WorseKind(IntensityKind a, IntensityKind b) {
  auto rank = [](IntensityKind k) {
    switch (k) {
      case IntensityKind::kConstant:
        return 0;
      case IntensityKind::kMeasured:
        return 1;
      case IntensityKind::kInterpolated:
        return 2;
      case IntensityKind::kHeld:
        return 3;
    }
    return 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

Status<int64_t> ParseTimestamp(std::string_view s) {
  s = Trim(s);
  auto bad = [&] {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bad timestamp '{}': use ISO 8601 like 2022-01-01 00:00:00+00:00 "
                                 "or Unix seconds",
                                 s));
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t secs = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), secs);
    if (ec != std::errc() || secs > std::numeric_limits<int64_t>::max() / kNsPerSec) return bad();
    return secs * kNsPerSec;
  }
  int y, mo, d, h, mi, sec;
  if (!Digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != ' ' && s[10] != 'T') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return bad();
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100'000'000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac_ns += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  int64_t offset_s = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
      // UTC
    } else if ((s[pos] == '+' || s[pos] == '-') && pos + 6 == s.size() && s[pos + 3] == ':') {
      int oh, om;
      if (!Digits(s, pos + 1, 2, &oh) || !Digits(s, pos + 4, 2, &om)) return bad();
      offset_s = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    } else {
      return bad();
    }
  }
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  return secs * kNsPerSec + frac_ns;
}

Status<IntensitySource> IntensitySource::Constant(double g_per_kwh) {
  if (!std::isfinite(g_per_kwh) || g_per_kwh < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("carbon intensity {} gCO2e/kWh must be finite and >= 0; fix "
                                 "carbon.intensity in the config",
                                 g_per_kwh));
  }
  IntensitySource s;
  s.constant_ = true;
  s.constant_value_ = g_per_kwh;
  return s;
}

Status<IntensitySource> IntensitySource::FromCsvText(std::string_view text,
                                                     const TraceOptions& options,
                                                     std::string_view origin) {
  IntensitySource s;
  s.options_ = options;
  size_t pos = 0, line_no = 0;
  bool header = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (!header) {
      header = true;
      continue;
    }
    auto bad = [&](std::string_view what) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{} line {}: {} in '{}'; expected timestamp,gco2e_per_kwh",
                                   origin, line_no, what, line));
    };
    size_t comma = line.find(',');
    if (comma == std::string_view::npos) return bad("no comma");
    auto ts = ParseTimestamp(line.substr(0, comma));
    if (!ts) return bad(ts.error().message());
    std::string_view v = Trim(line.substr(comma + 1));
    Row row{*ts, 0.0, false};
    if (!v.empty()) {
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), row.value);
      if (ec != std::errc() || p != v.data() + v.size() || !std::isfinite(row.value) ||
          row.value < 0) {
        return bad("bad intensity (a number >= 0, or empty for a gap)");
      }
      row.measured = true;
    }
    if (!s.rows_.empty() && row.t_ns <= s.rows_.back().t_ns) return bad("time does not increase");
    s.rows_.push_back(row);
  }
  if (std::none_of(s.rows_.begin(), s.rows_.end(), [](const Row& r) { return r.measured; })) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} has no measured intensity: give at least one "
                                 "timestamp,gco2e_per_kwh row with a value",
                                 origin));
  }
  s.step_ns_ = 3600 * kNsPerSec;
  if (s.rows_.size() >= 2) {
    s.step_ns_ = std::numeric_limits<int64_t>::max();
    for (size_t i = 1; i < s.rows_.size(); ++i) {
      s.step_ns_ = std::min(s.step_ns_, s.rows_[i].t_ns - s.rows_[i - 1].t_ns);
    }
  }
  int n = static_cast<int>(s.rows_.size());
  s.prev_measured_.assign(n, -1);
  s.next_measured_.assign(n, -1);
  for (int i = 0, last = -1; i < n; ++i) {
    if (s.rows_[i].measured) last = i;
    s.prev_measured_[i] = last;
  }
  for (int i = n - 1, next = -1; i >= 0; --i) {
    s.next_measured_[i] = next;
    if (s.rows_[i].measured) next = i;
  }
  for (const Row& r : s.rows_) {
    s.breaks_.push_back(r.t_ns);
    s.breaks_.push_back(r.t_ns + s.step_ns_);
  }
  std::sort(s.breaks_.begin(), s.breaks_.end());
  s.breaks_.erase(std::unique(s.breaks_.begin(), s.breaks_.end()), s.breaks_.end());
  return s;
}

Status<IntensitySource> IntensitySource::FromCsvFile(const std::string& path,
                                                     const TraceOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected(junction::Error::FromErrno(fmt::format(
        "cannot read carbon-intensity trace {}; check carbon.trace in the config", path)));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return FromCsvText(buf.str(), options, path);
}

int64_t IntensitySource::begin_ns() const {
  return constant_ ? 0 : rows_.front().t_ns;
}
int64_t IntensitySource::end_ns() const {
  return constant_ ? 0 : rows_.back().t_ns + step_ns_;
}

Status<int64_t> IntensitySource::Map(int64_t t) const {
  int64_t b = begin_ns(), e = end_ns();
  if (t >= b && t < e) return t;
  if (options_.out_of_range == OutOfRangePolicy::kRepeat) {
    int64_t span = e - b;
    int64_t off = (t - b) % span;
    if (off < 0) off += span;
    return b + off;
  }
  return MakeError(ErrorCode::kNotFound,
                   fmt::format("time {} ns is outside the carbon-intensity trace [{}, {}) ns: use "
                               "a trace that covers it, a constant, or out_of_range = repeat",
                               t, b, e));
}

Intensity IntensitySource::AtMapped(int64_t t) const {
  // The last row starting at or before t.
  auto it = std::upper_bound(rows_.begin(), rows_.end(), t,
                             [](int64_t v, const Row& r) { return v < r.t_ns; });
  int i = static_cast<int>(it - rows_.begin()) - 1;
  if (i >= 0 && rows_[i].measured && t < rows_[i].t_ns + step_ns_) {
    return {rows_[i].value, IntensityKind::kMeasured};
  }
  int a = i >= 0 ? prev_measured_[i] : -1;
  int b = i >= 0 ? next_measured_[i] : 0;
  if (b >= 0 && !rows_[b].measured) b = next_measured_[b];
  if (options_.gaps == GapPolicy::kInterpolate && a >= 0 && b >= 0) {
    double f =
        static_cast<double>(t - rows_[a].t_ns) / static_cast<double>(rows_[b].t_ns - rows_[a].t_ns);
    return {rows_[a].value + (rows_[b].value - rows_[a].value) * f, IntensityKind::kInterpolated};
  }
  return {a >= 0 ? rows_[a].value : rows_[b].value, IntensityKind::kHeld};
}

Status<Intensity> IntensitySource::At(int64_t t_ns) const {
  if (constant_) return Intensity{constant_value_, IntensityKind::kConstant};
  auto m = Map(t_ns);
  if (!m) return std::unexpected(m.error());
  return AtMapped(*m);
}

int64_t IntensitySource::NextBreak(int64_t mapped_t) const {
  auto it = std::upper_bound(breaks_.begin(), breaks_.end(), mapped_t);
  return it == breaks_.end() ? end_ns() : *it;
}

Status<Intensity> IntensitySource::MeanOver(int64_t begin_ns, int64_t end_ns) const {
  if (constant_ || end_ns <= begin_ns) return At(begin_ns);
  double integral = 0.0;
  IntensityKind kind = IntensityKind::kMeasured;
  bool first = true;
  int64_t cur = begin_ns;
  while (cur < end_ns) {
    auto m = Map(cur);
    if (!m) return std::unexpected(m.error());
    int64_t next = cur + (NextBreak(*m) - *m);
    int64_t seg_end = std::min(next, end_ns);
    auto mid = Map(cur + (seg_end - cur) / 2);
    if (!mid) return std::unexpected(mid.error());
    Intensity v = AtMapped(*mid);
    integral += v.g_per_kwh * static_cast<double>(seg_end - cur);
    kind = first ? v.kind : WorseKind(kind, v.kind);
    first = false;
    cur = seg_end;
  }
  return Intensity{integral / static_cast<double>(end_ns - begin_ns), kind};
}

Status<CarbonModel> CarbonModel::Create(IntensitySource intensity, const CarbonOptions& options) {
  if (!std::isfinite(options.embodied_g_per_core_second) ||
      options.embodied_g_per_core_second < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("embodied carbon {} g per core-second must be finite and >= 0; "
                                 "fix carbon.embodied_g_per_core_second in the config",
                                 options.embodied_g_per_core_second));
  }
  return CarbonModel(std::move(intensity), options);
}

Status<CarbonPrice> CarbonModel::PriceInterval(Joules j, int64_t begin_ns, int64_t end_ns,
                                               double core_seconds) const {
  auto ci = intensity_.MeanOver(begin_ns, end_ns);
  if (!ci) return std::unexpected(ci.error());
  CarbonPrice p;
  p.intensity = *ci;
  p.grams = Grams(j, ci->g_per_kwh);
  p.embodied_grams = core_seconds * options_.embodied_g_per_core_second;
  return p;
}

}  // namespace energy::carbon
