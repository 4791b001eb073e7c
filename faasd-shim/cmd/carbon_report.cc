// carbon_report.cc — reads the ledger's invocation and interval rows and prints the bill.
#include "faasd-shim/cmd/carbon_report.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "energy/carbon/intensity.h"
#include "energy/ledger/sqlite.h"

namespace faasnode {
namespace {

struct Row {
  std::string key;  // function name or hour
  std::string source;
  long long calls = 0;
  double joules = 0;
  double grams = 0;
  double embodied = 0;
  bool priced = true;  // the node's own rows carry joules only: their carbon is not priced yet
};

std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      o += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    o += c;
  }
  return o;
}

void PrintRows(const std::vector<Row>& rows, const std::string& format, const std::string& key_name) {
  if (format == "csv") {
    std::printf("%s,source,calls,joules,grams_co2e,embodied_grams\n", key_name.c_str());
    for (const Row& r : rows) {
      if (r.priced) {
        std::printf("%s,%s,%lld,%.9g,%.9g,%.9g\n", r.key.c_str(), r.source.c_str(), r.calls, r.joules, r.grams, r.embodied);
      } else {
        std::printf("%s,%s,%lld,%.9g,,\n", r.key.c_str(), r.source.c_str(), r.calls, r.joules);
      }
    }
  } else if (format == "json") {
    std::printf("[");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      const std::string grams = r.priced ? fmt::format("{:.9g}", r.grams) : "null";
      const std::string embodied = r.priced ? fmt::format("{:.9g}", r.embodied) : "null";
      std::printf("%s{\"%s\":\"%s\",\"source\":\"%s\",\"calls\":%lld,\"joules\":%.9g,\"grams_co2e\":%s,"
                  "\"embodied_grams\":%s}",
                  i ? "," : "", key_name.c_str(), JsonEscape(r.key).c_str(), JsonEscape(r.source).c_str(), r.calls,
                  r.joules, grams.c_str(), embodied.c_str());
    }
    std::printf("]\n");
  } else {
    std::printf("%-24s %-8s %10s %14s %14s %12s\n", key_name.c_str(), "source", "calls", "joules", "gCO2e", "embodied g");
    for (const Row& r : rows) {
      if (r.priced) {
        std::printf("%-24s %-8s %10lld %14.6f %14.9f %12.9f\n", r.key.c_str(), r.source.c_str(), r.calls, r.joules,
                    r.grams, r.embodied);
      } else {
        std::printf("%-24s %-8s %10lld %14.6f %14s %12s\n", r.key.c_str(), r.source.c_str(), r.calls, r.joules, "-", "-");
      }
    }
  }
}

}  // namespace

int RunCarbonReport(const CarbonReportOptions& o) {
  if (o.format != "table" && o.format != "csv" && o.format != "json") {
    std::fprintf(stderr, "faasnode carbon report: --format %s is not available; use table, csv or json "
                         "(html is not built yet)\n", o.format.c_str());
    return 2;
  }
  if (o.group_by != "function" && o.group_by != "hour") {
    std::fprintf(stderr, "faasnode carbon report: --group-by %s: use function or hour\n", o.group_by.c_str());
    return 2;
  }
  std::int64_t since = 0, until = INT64_MAX;
  for (auto [text, out, name] : {std::tuple{&o.since, &since, "--since"}, std::tuple{&o.until, &until, "--until"}}) {
    if (text->empty()) continue;
    auto t = energy::carbon::ParseTimestamp(*text);
    if (!t) {
      std::fprintf(stderr, "faasnode carbon report: %s %s: %s\n", name, text->c_str(), t.error().message().c_str());
      return 2;
    }
    *out = *t;
  }
  if (!std::filesystem::exists(o.ledger_path)) {
    std::fprintf(stderr, "faasnode carbon report: no ledger at %s; run the node with [energy] on, or pass --ledger\n",
                 o.ledger_path.c_str());
    return 2;
  }
  auto db = energy::SqliteDb::Open(o.ledger_path, {.read_only = true});
  if (!db) {
    std::fprintf(stderr, "faasnode carbon report: %s\n", db.error().message().c_str());
    return 1;
  }
  const std::string key = o.group_by == "hour" ? "strftime('%Y-%m-%dT%H:00Z', end_ns / 1000000000, 'unixepoch')" : "function";
  auto st = db->Prepare(fmt::format(
      "SELECT {}, source, COUNT(*), SUM(total_j), SUM(grams), SUM(embodied_grams) FROM invocations "
      "WHERE end_ns >= ?1 AND end_ns < ?2 AND (?3 = '' OR function = ?3) GROUP BY 1, 2 ORDER BY 1, 2", key));
  if (!st) {
    std::fprintf(stderr, "faasnode carbon report: %s\n", st.error().message().c_str());
    return 1;
  }
  st->Bind(1, since);
  st->Bind(2, until);
  st->BindText(3, o.function);
  std::vector<Row> rows;
  while (true) {
    auto more = st->Step();
    if (!more) {
      std::fprintf(stderr, "faasnode carbon report: %s\n", more.error().message().c_str());
      return 1;
    }
    if (!*more) break;
    rows.push_back({st->ColumnText(0), st->ColumnText(1), st->ColumnInt64(2), st->ColumnDouble(3),
                    st->ColumnDouble(4), st->ColumnDouble(5)});
  }
  // The node's own share, from the interval rows: with it the report adds up to the meter.
  if (o.function.empty() && o.group_by == "function") {
    auto iv = db->Prepare(
        "SELECT source, COUNT(*), SUM(meter_total_j), SUM(invocations_j), SUM(idle_j), SUM(overhead_j), "
        "SUM(unaccounted_j) FROM intervals WHERE end_ns >= ?1 AND end_ns < ?2 GROUP BY source");
    if (iv) {
      iv->Bind(1, since);
      iv->Bind(2, until);
      while (auto more = iv->Step()) {
        if (!*more) break;
        const std::string source = iv->ColumnText(0);
        rows.push_back({"(node idle)", source, 0, iv->ColumnDouble(4), 0, 0, false});
        rows.push_back({"(node overhead)", source, 0, iv->ColumnDouble(5), 0, 0, false});
        if (iv->ColumnDouble(6) != 0) rows.push_back({"(unaccounted)", source, 0, iv->ColumnDouble(6), 0, 0, false});
        rows.push_back({"= meter (intervals)", source, iv->ColumnInt64(1), iv->ColumnDouble(2), 0, 0, false});
      }
    }
  }
  PrintRows(rows, o.format, o.group_by);
  return 0;
}

}  // namespace faasnode
