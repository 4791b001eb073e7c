// log_store.cc — per-function log rings and the Message JSON.
#include "faasd-shim/logs/log_store.h"

#include <fmt/format.h>
#include <time.h>

#include <charconv>
#include <climits>
#include <mutex>

namespace faasnode::logs {
namespace {

std::int64_t NowUnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

std::string Key(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + 1 + name.size());
  k += ns;
  k += '/';
  k += name;
  return k;
}

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (const unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else if (c == '<' || c == '>' || c == '&') {  // as Go's encoder escapes them
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace

LogStore::LogStore(LogStoreOptions options) : options_(options) {
  if (options_.max_lines < 1) options_.max_lines = 1;
  if (options_.max_bytes < 1) options_.max_bytes = 1;
}

LogStore::~LogStore() = default;

LogStore::FunctionLog* LogStore::Find(std::string_view key, bool create) {
  std::lock_guard lock(map_lock_);
  auto it = functions_.find(key);
  if (it != functions_.end()) return it->second.get();
  if (!create) return nullptr;
  return functions_.emplace(std::string(key), std::make_unique<FunctionLog>()).first->second.get();
}

void LogStore::Append(std::string_view name, std::string_view ns, std::string_view instance, std::string_view text) {
  AppendAt(NowUnixNs(), name, ns, instance, text);
}

void LogStore::AppendAt(std::int64_t unix_ns, std::string_view name, std::string_view ns, std::string_view instance,
                        std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  if (text.ends_with('\r')) text.remove_suffix(1);
  if (text.size() > options_.max_bytes) text = text.substr(0, options_.max_bytes);
  LogLine line{.seq = 0,
               .unix_ns = unix_ns,
               .name = std::string(name),
               .ns = std::string(ns),
               .instance = std::string(instance),
               .text = std::string(text)};
  FunctionLog* f = Find(Key(ns, name), /*create=*/true);
  std::lock_guard lock(f->lock);
  line.seq = seq_.fetch_add(1, std::memory_order_acq_rel) + 1;
  f->bytes += line.text.size();
  f->lines.push_back(std::move(line));
  while (f->lines.size() > options_.max_lines || f->bytes > options_.max_bytes) {
    f->bytes -= f->lines.front().text.size();
    f->lines.pop_front();
  }
}

std::vector<LogLine> LogStore::Read(const LogQuery& q, std::uint64_t after_seq) const {
  std::vector<LogLine> out;
  FunctionLog* f = const_cast<LogStore*>(this)->Find(Key(q.ns, q.name), /*create=*/false);
  if (f == nullptr) return out;
  {
    std::lock_guard lock(f->lock);
    for (const LogLine& l : f->lines) {
      if (l.seq <= after_seq) continue;
      if (!q.instance.empty() && l.instance != q.instance) continue;
      if (q.since_ns && l.unix_ns < *q.since_ns) continue;
      out.push_back(l);
    }
  }
  if (after_seq == 0 && q.tail > 0 && out.size() > static_cast<std::size_t>(q.tail)) {
    out.erase(out.begin(), out.end() - q.tail);
  }
  return out;
}

std::string FormatRfc3339Nano(std::int64_t unix_ns) {
  std::int64_t secs = unix_ns / 1'000'000'000;
  std::int64_t nanos = unix_ns % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    secs -= 1;
  }
  const time_t t = static_cast<time_t>(secs);
  tm utc;
  gmtime_r(&t, &utc);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", utc.tm_year + 1900, utc.tm_mon + 1,
                                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  if (nanos != 0) {
    std::string frac = fmt::format("{:09}", nanos);
    while (frac.back() == '0') frac.pop_back();
    out += '.';
    out += frac;
  }
  out += 'Z';
  return out;
}

std::optional<std::int64_t> ParseRfc3339(std::string_view s) {
  auto num = [&](std::size_t pos, std::size_t len, int& v) {
    if (pos + len > s.size()) return false;
    const auto [p, ec] = std::from_chars(s.data() + pos, s.data() + pos + len, v);
    return ec == std::errc() && p == s.data() + pos + len;
  };
  int Y, M, D, h, m, sec;
  if (s.size() < 20 || !num(0, 4, Y) || s[4] != '-' || !num(5, 2, M) || s[7] != '-' || !num(8, 2, D) ||
      (s[10] != 'T' && s[10] != 't') || !num(11, 2, h) || s[13] != ':' || !num(14, 2, m) || s[16] != ':' ||
      !num(17, 2, sec)) {
    return std::nullopt;
  }
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 59) return std::nullopt;
  std::size_t i = 19;
  std::int64_t nanos = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t start = i;
    std::int64_t scale = 100'000'000;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      nanos += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start || i - start > 9) return std::nullopt;
  }
  if (i >= s.size()) return std::nullopt;
  std::int64_t offset_s = 0;
  if (s[i] == 'Z' || s[i] == 'z') {
    ++i;
  } else if (s[i] == '+' || s[i] == '-') {
    int oh, om;
    if (!num(i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' || !num(i + 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_s = (oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  tm t{};
  t.tm_year = Y - 1900;
  t.tm_mon = M - 1;
  t.tm_mday = D;
  t.tm_hour = h;
  t.tm_min = m;
  t.tm_sec = sec;
  const std::int64_t secs = static_cast<std::int64_t>(timegm(&t)) - offset_s;
  // Unix nanoseconds in an int64 end in 2262 (and begin in 1677): clamp beyond.
  if (secs >= INT64_MAX / 1'000'000'000 - 1) return INT64_MAX;
  if (secs <= INT64_MIN / 1'000'000'000 + 1) return INT64_MIN;
  return secs * 1'000'000'000 + nanos;
}

void AppendMessageJson(std::string& out, const LogLine& l) {
  out += "{\"name\":";
  AppendJsonString(out, l.name);
  out += ",\"namespace\":";
  AppendJsonString(out, l.ns);
  out += ",\"instance\":";
  AppendJsonString(out, l.instance);
  out += ",\"timestamp\":\"";
  out += FormatRfc3339Nano(l.unix_ns);
  out += "\",\"text\":";
  AppendJsonString(out, l.text);
  out += "}\n";
}

}  // namespace faasnode::logs
