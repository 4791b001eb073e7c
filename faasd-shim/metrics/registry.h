// registry.h — the node's Prometheus registry: collectors that write the text exposition format.
//
// A collector is a function that, at scrape time, reads its own counters and writes families
// of samples through a MetricWriter. Counting is the collectors' business (per-core slots,
// see gateway_metrics.h); the registry only renders, so nothing it does touches a hot path.
//
//   Registry registry;
//   registry.Add([&totals](MetricWriter& w) {
//     w.Family("faasnode_energy_joules_total", "counter", "Joules billed to each function.");
//     for (const auto& t : totals.Read())
//       w.Sample({{"function", t.name}, {"zone", t.zone}, {"source", t.source}}, t.joules);
//   });
//   std::string text = registry.Render();   // GET /metrics
//
// Text format version 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/):
// `# HELP`, `# TYPE`, then `name{label="value",...} value` lines; label values are escaped
// (backslash, double quote, newline). A family is written once: a second Family() call with a
// name already written in this scrape is a collector bug and its samples are dropped (a
// duplicate family makes Prometheus reject the whole scrape).
//
// Threads: Add() before serving (not concurrently with Render); Render() from any thread or
// uthread, several at once. Collectors run on the scraping uthread and must not block long.
#pragma once

#include <functional>
#include <initializer_list>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faasnode::metrics {

using Label = std::pair<std::string_view, std::string_view>;

class MetricWriter {
 public:
  explicit MetricWriter(std::string& out) : out_(out) {}

  // Starts a family. `type`: "counter", "gauge", "histogram" (or "untyped").
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the current family (or, with `suffix`, of one of its series such as
  // "_bucket", "_sum", "_count" of a histogram).
  void Sample(std::initializer_list<Label> labels, double value, std::string_view suffix = {});
  void Sample(const std::vector<Label>& labels, double value, std::string_view suffix = {});
  // A histogram's series from cumulative counts: buckets[i] observations <= bounds[i] (the
  // caller accumulates), then +Inf = count, _sum and _count. `labels` are the series' own.
  void Histogram(const std::vector<Label>& labels, std::span<const double> bounds,
                 std::span<const std::uint64_t> cumulative, std::uint64_t count, double sum);

 private:
  void Line(const Label* labels, std::size_t n, double value, std::string_view suffix,
            std::string_view extra_name = {}, std::string_view extra_value = {});

  std::string& out_;
  std::string family_;
  bool skipping_ = false;
  std::set<std::string, std::less<>> written_;
};

using Collector = std::function<void(MetricWriter&)>;

class Registry {
 public:
  void Add(Collector collector) { collectors_.push_back(std::move(collector)); }
  // The whole exposition, every collector in the order added.
  std::string Render() const;

 private:
  std::vector<Collector> collectors_;
};

// Appends a sample value the way Prometheus clients print it: integers without a fraction,
// "+Inf"/"-Inf"/"NaN", otherwise the shortest round-trip form.
void AppendValue(std::string& out, double value);

}  // namespace faasnode::metrics
