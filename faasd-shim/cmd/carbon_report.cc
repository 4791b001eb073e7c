// carbon_report.cc — prints the ledger's bill (billing::QueryCarbon) as a table, CSV, JSON or
// an HTML page whose plots are inline SVG drawn here.
#include "faasd-shim/cmd/carbon_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "energy/carbon/intensity.h"

namespace faasnode {
namespace {

using billing::CarbonReport;
using billing::CarbonRow;

std::string Cell(std::optional<double> v, const char* fmt_spec) {
  return v ? fmt::format(fmt::runtime(fmt_spec), *v) : "";
}

void PrintTable(const CarbonReport& r, bool csv) {
  const std::string key(billing::GroupByName(r.group_by));
  if (csv) {
    std::printf("%s,source,calls,joules,grams_co2e,embodied_grams,intensity_kind\n", key.c_str());
    for (const CarbonRow& row : r.rows) {
      std::printf("%s,%s,%lld,%.9g,%s,%s,%s\n", row.key.c_str(), row.source.c_str(), row.calls, row.joules,
                  Cell(row.grams, "{:.9g}").c_str(), Cell(row.embodied, "{:.9g}").c_str(),
                  row.intensity_kind.c_str());
    }
    return;
  }
  // intensity: how the grams' g/kWh was obtained (measured, interpolated, held, constant).
  std::printf("%-24s %-10s %10s %14s %14s %12s  %s\n", key.c_str(), "source", "calls", "joules", "gCO2e", "embodied g",
              "intensity");
  for (const CarbonRow& row : r.rows) {
    const std::string g = row.grams ? fmt::format("{:.9f}", *row.grams) : "-";
    const std::string e = row.embodied ? fmt::format("{:.9f}", *row.embodied) : "-";
    std::printf("%-24s %-10s %10lld %14.6f %14s %12s  %s\n", row.key.c_str(), row.source.c_str(), row.calls, row.joules,
                g.c_str(), e.c_str(), row.intensity_kind.empty() ? "-" : row.intensity_kind.c_str());
  }
}

std::string Escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// A round axis maximum at or above v (1, 2 or 5 × 10^k).
double NiceMax(double v) {
  if (!(v > 0)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

// Horizontal bars, one per label, each with its value written at its end.
std::string BarsSvg(const std::string& title, const std::vector<std::pair<std::string, double>>& bars,
                    const std::string& unit, const char* colour) {
  const int row_h = 22, left = 170, width = 640, plot_w = width - left - 110;
  const int height = 40 + row_h * static_cast<int>(std::max<std::size_t>(bars.size(), 1));
  double max = 0;
  for (const auto& b : bars) max = std::max(max, b.second);
  const double axis = NiceMax(max);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">"
      "<text x=\"4\" y=\"16\" class=\"t\">{}</text>",
      width, height, Escape(title), Escape(title));
  int y = 30;
  for (const auto& [label, value] : bars) {
    const double w = axis > 0 ? value / axis * plot_w : 0;
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {:.9g} {}</title></rect>"
        "<text x=\"{:.1f}\" y=\"{}\">{:.4g} {}</text>",
        left - 6, y + 14, Escape(label), left, y + 2, w, row_h - 6, colour, Escape(label), value, unit,
        left + w + 4, y + 14, value, unit);
    y += row_h;
  }
  if (bars.empty()) s += fmt::format("<text x=\"{}\" y=\"44\">no invocations in range</text>", left);
  s += "</svg>";
  return s;
}

// Per hour: joules (bars) and grams (bars), with the intensity curve (line, right axis).
std::string HoursSvg(const CarbonReport& by_hour) {
  std::map<std::string, std::pair<double, double>> inv;  // hour -> invocation joules, grams
  for (const CarbonRow& r : by_hour.rows) {
    auto& [j, g] = inv[r.key];
    j += r.joules;
    g += r.grams.value_or(0);
  }
  const auto& pts = by_hour.intensity;
  const int width = 760, height = 300, left = 70, right = 70, top = 30, bottom = 60;
  const int plot_w = width - left - right, plot_h = height - top - bottom;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"joules and grams per hour against the carbon intensity\">"
      "<text x=\"4\" y=\"16\" class=\"t\">Per hour: meter joules (grey), invocation joules (blue), "
      "invocation gCO2e (green, own scale), intensity gCO2e/kWh (red line, right axis)</text>",
      width, height);
  if (pts.empty()) return s + fmt::format("<text x=\"{}\" y=\"{}\">no intervals in range</text></svg>", left, top + 40);
  double max_j = 0, max_g = 0, max_i = 0;
  for (const auto& p : pts) {
    max_j = std::max(max_j, p.meter_joules);
    max_i = std::max(max_i, p.g_per_kwh);
    if (auto it = inv.find(p.hour); it != inv.end()) max_g = std::max(max_g, it->second.second);
  }
  const double axis_j = NiceMax(max_j), axis_g = NiceMax(max_g), axis_i = NiceMax(max_i);
  const double slot = static_cast<double>(plot_w) / static_cast<double>(pts.size());
  const double bar = std::max(1.0, slot / 3.5);
  const int base = top + plot_h;
  s += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#444\"/>"
      "<line x1=\"{3}\" y1=\"{1}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#c33\"/>"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"end\">{6:.3g} J</text>"
      "<text x=\"{4}\" y=\"{2}\" text-anchor=\"end\">0</text>"
      "<text x=\"{7}\" y=\"{5}\" fill=\"#c33\">{8:.3g} g/kWh</text>"
      "<text x=\"{7}\" y=\"{9}\" fill=\"#393\">{10:.3g} g</text>",
      left, top, base, left + plot_w, left - 4, top + 10, axis_j, left + plot_w + 4, axis_i, top + 24, axis_g);
  std::string line;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    const double x0 = left + slot * static_cast<double>(i) + (slot - 3 * bar) / 2;
    const auto it = inv.find(p.hour);
    const double ij = it == inv.end() ? 0 : it->second.first;
    const double ig = it == inv.end() ? 0 : it->second.second;
    auto h = [&](double v, double axis) { return axis > 0 ? v / axis * plot_h : 0; };
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#bbb\"><title>{} meter: {:.6g} J, "
        "{:.6g} g</title></rect>",
        x0, base - h(p.meter_joules, axis_j), bar, h(p.meter_joules, axis_j), Escape(p.hour), p.meter_joules,
        p.meter_grams);
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#36c\"><title>{} invocations: "
        "{:.6g} J</title></rect>",
        x0 + bar, base - h(ij, axis_j), bar, h(ij, axis_j), Escape(p.hour), ij);
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#393\"><title>{} invocations: "
        "{:.6g} gCO2e</title></rect>",
        x0 + 2 * bar, base - h(ig, axis_g), bar, h(ig, axis_g), Escape(p.hour), ig);
    const double cx = left + slot * (static_cast<double>(i) + 0.5);
    const double cy = base - h(p.g_per_kwh, axis_i);
    line += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", cx, cy);
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#c33\"><title>{}: {:.4g} gCO2e/kWh</title>"
                     "</circle>",
                     cx, cy, Escape(p.hour), p.g_per_kwh);
    if (pts.size() <= 24 || i % (pts.size() / 12 + 1) == 0) {
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" transform=\"rotate(-40 {:.1f} {})\">{}</text>",
                       cx, base + 14, cx, base + 14, Escape(p.hour.substr(5)));
    }
  }
  s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#c33\" stroke-width=\"2\"/>", line);
  return s + "</svg>";
}

}  // namespace

std::string CarbonReportHtml(const CarbonReport& by_function, const CarbonReport& by_hour, const std::string& title) {
  std::vector<std::pair<std::string, double>> joules, grams;
  std::map<std::string, std::pair<double, double>> per_fn;
  for (const CarbonRow& r : by_function.rows) {
    if (r.kind != CarbonRow::Kind::kFunction) continue;
    auto& [j, g] = per_fn[r.key];
    j += r.joules;
    g += r.grams.value_or(0);
  }
  for (const auto& [fn, jg] : per_fn) {
    joules.emplace_back(fn, jg.first);
    grams.emplace_back(fn, jg.second);
  }
  std::string table = "<table><tr><th>function</th><th>source</th><th>calls</th><th>joules</th><th>gCO2e</th>"
                      "<th>embodied g</th><th>intensity</th></tr>";
  for (const CarbonRow& r : by_function.rows) {
    table += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{:.6f}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                         r.kind == CarbonRow::Kind::kMeter ? " class=\"m\"" : "", Escape(r.key), Escape(r.source),
                         r.calls, r.joules, r.grams ? fmt::format("{:.9f}", *r.grams) : "-",
                         r.embodied ? fmt::format("{:.9f}", *r.embodied) : "-",
                         r.intensity_kind.empty() ? "-" : Escape(r.intensity_kind));
  }
  table += "</table>";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>"
      "body{{font:14px sans-serif;margin:1.5em;color:#222}}svg{{display:block;margin:1em 0;font:12px sans-serif}}"
      ".t{{font-weight:bold}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px;"
      "text-align:right}}td:first-child,th:first-child{{text-align:left}}tr.m{{font-weight:bold}}"
      "</style></head><body>\n<h1>{0}</h1>\n<p>Every figure is labelled with its source: rapl or nvml "
      "(measured), model (estimated by the power model), replay (a recorded trace). Functions, the node's "
      "idle and overhead add up to the meter.</p>\n{1}\n{2}\n{3}\n{4}\n</body></html>\n",
      Escape(title), table, BarsSvg("Joules per function", joules, "J", "#36c"),
      BarsSvg("gCO2e per function", grams, "g", "#393"), HoursSvg(by_hour));
}

int RunCarbonReport(const CarbonReportOptions& o) {
  if (o.format != "table" && o.format != "csv" && o.format != "json" && o.format != "html") {
    std::fprintf(stderr, "faasnode carbon report: --format %s: use table, csv, json or html\n", o.format.c_str());
    return 2;
  }
  auto group = billing::ParseGroupBy(o.group_by);
  if (!group) {
    std::fprintf(stderr, "faasnode carbon report: --%s\n", group.error().message().c_str());
    return 2;
  }
  billing::CarbonQuery q{.function = o.function, .group_by = *group};
  for (auto [text, out, name] :
       {std::tuple{&o.since, &q.since_ns, "--since"}, std::tuple{&o.until, &q.until_ns, "--until"}}) {
    if (text->empty()) continue;
    auto t = energy::carbon::ParseTimestamp(*text);
    if (!t) {
      std::fprintf(stderr, "faasnode carbon report: %s %s: %s\n", name, text->c_str(), t.error().message().c_str());
      return 2;
    }
    *out = *t;
  }
  auto report = billing::QueryCarbon(o.ledger_path, q);
  if (!report) {
    std::fprintf(stderr, "faasnode carbon report: %s\n", report.error().message().c_str());
    return report.error().code() == junction::ErrorCode::kNotFound ? 2 : 1;
  }
  if (o.format == "json") {
    std::printf("%s\n", billing::CarbonReportJson(*report).c_str());
  } else if (o.format == "html") {
    billing::CarbonQuery other = q;
    other.group_by = q.group_by == billing::GroupBy::kHour ? billing::GroupBy::kFunction : billing::GroupBy::kHour;
    auto second = billing::QueryCarbon(o.ledger_path, other);
    if (!second) {
      std::fprintf(stderr, "faasnode carbon report: %s\n", second.error().message().c_str());
      return 1;
    }
    const bool hour_first = q.group_by == billing::GroupBy::kHour;
    const std::string title =
        fmt::format("faasnode carbon report{}", o.function.empty() ? "" : " — " + o.function);
    std::fputs(CarbonReportHtml(hour_first ? *second : *report, hour_first ? *report : *second, title).c_str(),
               stdout);
  } else {
    PrintTable(*report, o.format == "csv");
  }
  return 0;
}

}  // namespace faasnode
