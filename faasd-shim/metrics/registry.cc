// registry.cc — the Prometheus text exposition writer and the registry.
#include "faasd-shim/metrics/registry.h"

#include <fmt/format.h>

#include <cmath>

namespace faasnode::metrics {
namespace {

void AppendEscaped(std::string& out, std::string_view v, bool quote_too) {
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote_too) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

void AppendValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else if (value == std::floor(value) && std::fabs(value) < 1e15) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<long long>(value));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", value);
  }
}

void MetricWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  family_ = std::string(name);
  skipping_ = !written_.insert(family_).second;
  if (skipping_) return;
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  AppendEscaped(out_, help, /*quote_too=*/false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void MetricWriter::Line(const Label* labels, std::size_t n, double value, std::string_view suffix,
                        std::string_view extra_name, std::string_view extra_value) {
  if (skipping_ || family_.empty()) return;
  out_ += family_;
  out_ += suffix;
  if (n > 0 || !extra_name.empty()) {
    out_ += '{';
    bool first = true;
    auto label = [&](std::string_view k, std::string_view v) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      AppendEscaped(out_, v, /*quote_too=*/true);
      out_ += '"';
    };
    for (std::size_t i = 0; i < n; ++i) label(labels[i].first, labels[i].second);
    if (!extra_name.empty()) label(extra_name, extra_value);
    out_ += '}';
  }
  out_ += ' ';
  AppendValue(out_, value);
  out_ += '\n';
}

void MetricWriter::Sample(std::initializer_list<Label> labels, double value, std::string_view suffix) {
  Line(labels.begin(), labels.size(), value, suffix);
}

void MetricWriter::Sample(const std::vector<Label>& labels, double value, std::string_view suffix) {
  Line(labels.data(), labels.size(), value, suffix);
}

void MetricWriter::Histogram(const std::vector<Label>& labels, std::span<const double> bounds,
                             std::span<const std::uint64_t> cumulative, std::uint64_t count, double sum) {
  std::string le;
  for (std::size_t i = 0; i < bounds.size() && i < cumulative.size(); ++i) {
    le.clear();
    AppendValue(le, bounds[i]);
    Line(labels.data(), labels.size(), static_cast<double>(cumulative[i]), "_bucket", "le", le);
  }
  Line(labels.data(), labels.size(), static_cast<double>(count), "_bucket", "le", "+Inf");
  Line(labels.data(), labels.size(), sum, "_sum");
  Line(labels.data(), labels.size(), static_cast<double>(count), "_count");
}

std::string Registry::Render() const {
  std::string out;
  MetricWriter w(out);
  for (const auto& c : collectors_) c(w);
  return out;
}

}  // namespace faasnode::metrics
