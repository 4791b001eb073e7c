// report.cc — text, JSON and percentile-distribution renderings of a LoadResult.
#include "tests/load/report.h"

#include <fmt/core.h>

#include <cmath>

namespace faasload {

namespace {

double Us(std::uint64_t ns) { return ns / 1e3; }

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string TextSummary(const LoadResult& r, const ReportInfo& info) {
  const Histogram& l = *r.latency;
  const Histogram& s = *r.service;
  std::string out;
  out += fmt::format("faasload {} loop, {} ({} backend, {} core{}), {} connections\n",
                     r.open_loop ? "open" : "closed", info.url, info.backend, info.cores,
                     info.cores == 1 ? "" : "s", r.connections);
  if (r.open_loop) out += fmt::format("  offered:    {:.1f} req/s\n", r.offered_rps);
  out += fmt::format("  duration:   {:.3f} s, {} requests counted, {} ok, {} sent in all\n",
                     r.duration_s, r.requests, r.ok, r.sent);
  out += fmt::format("  throughput: {:.1f} req/s (ok)\n", r.throughput_rps());
  out += fmt::format(
      "  latency{} (us): p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}  mean {:.1f}\n",
      r.open_loop ? ", from scheduled send" : "", Us(l.ValueAtPercentile(50)),
      Us(l.ValueAtPercentile(90)), Us(l.ValueAtPercentile(99)), Us(l.ValueAtPercentile(99.9)),
      Us(l.max()), l.mean() / 1e3);
  out += fmt::format("  service time (us, uncorrected): p50 {:.1f}  p99 {:.1f}  max {:.1f}\n",
                     Us(s.ValueAtPercentile(50)), Us(s.ValueAtPercentile(99)), Us(s.max()));
  const ErrorCounts& e = r.errors;
  out += fmt::format("  errors: {} (connect {}, timeout {}, io {}, http_4xx {}, http_5xx {}, parse {})\n",
                     e.total(), e.connect, e.timeout, e.io, e.http_4xx, e.http_5xx, e.parse);
  return out;
}

std::string JsonReport(const LoadResult& r, const ReportInfo& info) {
  const Histogram& l = *r.latency;
  const Histogram& s = *r.service;
  const ErrorCounts& e = r.errors;
  std::string out = fmt::format(
      "{{\"mode\":\"{}\",\"url\":{},\"offered_rps\":{},\"connections\":{},\"duration_s\":{:.6f},"
      "\"requests\":{},\"ok\":{},\"throughput_rps\":{:.3f},\"sent\":{},\"backend\":{},\"cores\":{},"
      "\"errors\":{{\"connect\":{},\"timeout\":{},\"io\":{},\"http_4xx\":{},\"http_5xx\":{},"
      "\"parse\":{}}},"
      "\"latency_us\":{{\"p50\":{:.3f},\"p90\":{:.3f},\"p99\":{:.3f},\"p999\":{:.3f},\"max\":{:.3f},"
      "\"mean\":{:.3f}}},"
      "\"service_us\":{{\"p50\":{:.3f},\"p99\":{:.3f},\"max\":{:.3f}}},\"histogram\":[",
      r.open_loop ? "open" : "closed", JsonString(info.url),
      r.open_loop ? fmt::format("{}", r.offered_rps) : std::string("null"), r.connections,
      r.duration_s, r.requests, r.ok, r.throughput_rps(), r.sent, JsonString(info.backend),
      info.cores, e.connect, e.timeout, e.io, e.http_4xx, e.http_5xx, e.parse,
      Us(l.ValueAtPercentile(50)), Us(l.ValueAtPercentile(90)), Us(l.ValueAtPercentile(99)),
      Us(l.ValueAtPercentile(99.9)), Us(l.max()), l.mean() / 1e3, Us(s.ValueAtPercentile(50)),
      Us(s.ValueAtPercentile(99)), Us(s.max()));
  bool first = true;
  l.ForEachBucket([&](std::uint64_t, std::uint64_t high, std::uint64_t n) {
    out += fmt::format("{}{{\"le_us\":{:.3f},\"count\":{}}}", first ? "" : ",", Us(high), n);
    first = false;
  });
  out += "]}\n";
  return out;
}

std::string HgrmReport(const Histogram& h) {
  std::string out = "# percentile value_us count\n";
  if (h.count() == 0) return out;
  // Percentiles at halving distances from 100 (HdrHistogram's ticks), 5 per halving.
  double p = 0;
  for (int step = 0; p < 100.0 && step < 200; ++step) {
    const std::uint64_t v = h.ValueAtPercentile(p);
    const std::uint64_t below = h.count() - h.CountAbove(v);
    out += fmt::format("{:.6f} {:.3f} {}\n", p, Us(v), below);
    const double remaining = 100.0 - p;
    const int halvings = static_cast<int>(std::floor(std::log2(100.0 / remaining)));
    p += 100.0 / std::pow(2.0, halvings) / 10.0;
    if (100.0 - p < 1e-6) break;
  }
  out += fmt::format("{:.6f} {:.3f} {}\n", 100.0, Us(h.max()), h.count());
  return out;
}

}  // namespace faasload
