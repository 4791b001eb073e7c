// carbon_query.cc — SQL over the ledger's invocation and interval rows, and the JSON form.
#include "faasd-shim/billing/carbon_query.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "energy/ledger/pack.h"
#include "energy/ledger/sqlite.h"

namespace faasnode::billing {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

constexpr const char* kHourExpr = "strftime('%Y-%m-%dT%H:00Z', end_ns / 1000000000, 'unixepoch')";

std::string JsonString(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      o += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      o += c;
    }
  }
  return o + "\"";
}

std::string JsonNumber(std::optional<double> v) { return v ? fmt::format("{:.9g}", *v) : "null"; }

std::string_view KindName(CarbonRow::Kind k) {
  switch (k) {
    case CarbonRow::Kind::kFunction: return "function";
    case CarbonRow::Kind::kHour: return "hour";
    case CarbonRow::Kind::kNode: return "node";
    case CarbonRow::Kind::kMeter: return "meter";
  }
  return "function";
}

// GROUP_CONCAT(DISTINCT intensity_kind) ("held,measured" in any order) in a fixed order,
// best first, joined by '+': "measured+held".
std::string KindSet(std::string_view concat) {
  std::string out;
  for (std::string_view kind : {"measured", "interpolated", "held", "constant"}) {
    for (std::size_t pos = 0; pos <= concat.size();) {
      std::size_t end = concat.find(',', pos);
      if (end == std::string_view::npos) end = concat.size();
      if (concat.substr(pos, end - pos) == kind) {
        if (!out.empty()) out += '+';
        out += kind;
        break;
      }
      pos = end + 1;
    }
  }
  return out;
}

// kHourExpr's text for a unix-ns time, in C++ (for records decoded out of packs).
std::string HourKey(std::int64_t end_ns) {
  const std::time_t t = static_cast<std::time_t>(end_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:00Z", &tm);
  return buf;
}

// Steps `st` to the end, calling `row` for each result row.
template <typename F>
Status<void> ForEachRow(energy::SqliteStatement& st, F row) {
  while (true) {
    auto more = st.Step();
    if (!more) return std::unexpected(more.error());
    if (!*more) return {};
    row();
  }
}

}  // namespace

std::string_view GroupByName(GroupBy g) { return g == GroupBy::kHour ? "hour" : "function"; }

Status<GroupBy> ParseGroupBy(std::string_view s) {
  if (s == "function") return GroupBy::kFunction;
  if (s == "hour") return GroupBy::kHour;
  return MakeError(ErrorCode::kInvalidArgument, fmt::format("group_by {}: use function or hour", s));
}

namespace {

// The packs that reach across --since or --until (a pack's records span one writer round, so
// at most a few): their records are decoded and those ending inside the window are added to
// the report's rows, as their invocation rows will be once the node expands the pack. A pack
// this build cannot decode is counted whole when it ends inside the window (its totals are all
// the node knows of it).
Status<void> AddPacksAcrossTheWindow(energy::SqliteDb& db, const CarbonQuery& q, CarbonReport& report) {
  auto st = db.Prepare(
      "SELECT function, namespace, source, source_bits, format, body, last_end_ns, records, total_j, grams, "
      "embodied_grams, intensity_kinds FROM invocation_packs WHERE last_end_ns >= ?1 AND first_start_ns < ?2 "
      "AND (first_start_ns < ?1 OR last_end_ns >= ?2) AND (?3 = '' OR function = ?3) ORDER BY id");
  if (!st) return std::unexpected(st.error());
  st->Bind(1, q.since_ns);
  st->Bind(2, q.until_ns);
  st->BindText(3, q.function);
  const bool by_hour = q.group_by == GroupBy::kHour;
  struct Sum {
    long long calls = 0;
    double joules = 0, grams = 0, embodied = 0;
    std::string kinds;  // comma-separated, repeats allowed: KindSet puts them in order
  };
  auto add_kinds = [](Sum& sum, std::string_view kinds) {
    if (kinds.empty()) return;
    if (!sum.kinds.empty()) sum.kinds += ',';
    sum.kinds += kinds;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;  // (key, source)
  if (auto s = ForEachRow(*st, [&] {
        const std::string function = st->ColumnText(0);
        const std::string source = st->ColumnText(2);
        const auto sources = energy::SourceSet::FromBits(static_cast<std::uint8_t>(st->ColumnInt64(3)));
        auto decoded = energy::ForEachPacked(
            st->ColumnBlob(5), static_cast<int>(st->ColumnInt64(4)), function, st->ColumnText(1), sources,
            [&](std::uint64_t, const energy::InvocationRecord& r) {
              if (r.end_ns < q.since_ns || r.end_ns >= q.until_ns) return;
              Sum& sum = sums[{by_hour ? HourKey(r.end_ns) : function, source}];
              ++sum.calls;
              sum.joules += r.joules.NodeTotal().value;
              sum.grams += r.grams;
              sum.embodied += r.embodied_grams;
              add_kinds(sum, energy::carbon::IntensityKindName(r.intensity_kind));
            });
        const std::int64_t last_end = st->ColumnInt64(6);
        if (!decoded && last_end < q.until_ns) {
          Sum& sum = sums[{by_hour ? HourKey(last_end) : function, source}];
          sum.calls += st->ColumnInt64(7);
          sum.joules += st->ColumnDouble(8);
          sum.grams += st->ColumnDouble(9);
          sum.embodied += st->ColumnDouble(10);
          add_kinds(sum, st->ColumnText(11));
        }
      });
      !s) {
    return s;
  }
  if (sums.empty()) return {};
  const CarbonRow::Kind kind = by_hour ? CarbonRow::Kind::kHour : CarbonRow::Kind::kFunction;
  for (auto& [key, sum] : sums) {
    auto row = std::find_if(report.rows.begin(), report.rows.end(), [&](const CarbonRow& r) {
      return r.kind == kind && r.key == key.first && r.source == key.second;
    });
    if (row == report.rows.end()) {
      report.rows.push_back({kind, key.first, key.second, sum.calls, sum.joules, sum.grams, sum.embodied,
                             KindSet(sum.kinds)});
      continue;
    }
    row->calls += sum.calls;
    row->joules += sum.joules;
    row->grams = row->grams.value_or(0.0) + sum.grams;
    row->embodied = row->embodied.value_or(0.0) + sum.embodied;
    std::string merged = row->intensity_kind;  // KindSet's "measured+held"
    std::replace(merged.begin(), merged.end(), '+', ',');
    add_kinds(sum, merged);
    row->intensity_kind = KindSet(sum.kinds);
  }
  // The SQL's order: by key, then source.
  std::stable_sort(report.rows.begin(), report.rows.end(), [](const CarbonRow& a, const CarbonRow& b) {
    return std::tie(a.key, a.source) < std::tie(b.key, b.source);
  });
  return {};
}

}  // namespace

Status<CarbonReport> QueryCarbon(const std::string& ledger_path, const CarbonQuery& q) {
  if (!std::filesystem::exists(ledger_path)) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no ledger at {}; run the node with [energy] on, or pass --ledger", ledger_path));
  }
  auto db = energy::SqliteDb::Open(ledger_path, {.read_only = true});
  if (!db) return std::unexpected(db.error());
  CarbonReport report;
  report.group_by = q.group_by;
  const bool by_hour = q.group_by == GroupBy::kHour;
  // Calls the ledger folded into overflow_aggregates (its queue was full) are billed too: without
  // them the functions would not add up to the meter after an overflow. An aggregate counts its
  // records, is placed at its last call's end, and carries no intensity kind. Packs (records a
  // running node has not expanded into rows yet; ledgers of schema 3 on) count the same way,
  // with their records' kinds. A pack never spans an hour, so --group-by hour places it whole;
  // one wholly inside --since/--until is summed with the rows, and one across either end of
  // the window is decoded and its records counted one by one (below).
  auto has_packs = db->QueryInt64(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'invocation_packs'");
  if (!has_packs) return std::unexpected(has_packs.error());
  auto st = db->Prepare(fmt::format(
      "SELECT {}, source, SUM(n), SUM(total_j), SUM(grams), SUM(embodied_grams), "
      "GROUP_CONCAT(DISTINCT intensity_kind) FROM ("
      "SELECT function, end_ns, source, 1 AS n, total_j, grams, embodied_grams, intensity_kind "
      "FROM invocations UNION ALL "
      "SELECT function, last_end_ns, source, records, total_j, grams, embodied_grams, NULL "
      "FROM overflow_aggregates{}) "
      "WHERE end_ns >= ?1 AND end_ns < ?2 AND (?3 = '' OR function = ?3) GROUP BY 1, 2 ORDER BY 1, 2",
      by_hour ? kHourExpr : "function",
      *has_packs > 0 ? " UNION ALL SELECT function, last_end_ns, source, records, total_j, grams, "
                       "embodied_grams, intensity_kinds FROM invocation_packs WHERE first_start_ns >= ?1"
                     : ""));
  if (!st) return std::unexpected(st.error());
  st->Bind(1, q.since_ns);
  st->Bind(2, q.until_ns);
  st->BindText(3, q.function);
  if (auto s = ForEachRow(*st, [&] {
        report.rows.push_back({by_hour ? CarbonRow::Kind::kHour : CarbonRow::Kind::kFunction, st->ColumnText(0),
                               st->ColumnText(1), st->ColumnInt64(2), st->ColumnDouble(3), st->ColumnDouble(4),
                               st->ColumnDouble(5), KindSet(st->ColumnText(6))});
      });
      !s) {
    return std::unexpected(s.error());
  }
  if (*has_packs > 0) {
    if (auto s = AddPacksAcrossTheWindow(*db, q, report); !s) return std::unexpected(s.error());
  }
  // The node's own share, from the interval rows: with it the functions add up to the meter.
  // Grams are given only where every interval in range was priced (version-2 ledgers).
  if (q.function.empty() && !by_hour) {
    auto iv = db->Prepare(
        "SELECT source, COUNT(*), SUM(meter_total_j), SUM(idle_j), SUM(overhead_j), SUM(unaccounted_j), "
        "COUNT(meter_grams), SUM(meter_grams), SUM(idle_grams), SUM(overhead_grams), SUM(unaccounted_grams) "
        "FROM intervals WHERE end_ns >= ?1 AND end_ns < ?2 GROUP BY source ORDER BY source");
    if (!iv) return std::unexpected(iv.error());
    iv->Bind(1, q.since_ns);
    iv->Bind(2, q.until_ns);
    if (auto s = ForEachRow(*iv, [&] {
          const std::string source = iv->ColumnText(0);
          const bool priced = iv->ColumnInt64(6) == iv->ColumnInt64(1);
          auto g = [&](int col) { return priced ? std::optional<double>(iv->ColumnDouble(col)) : std::nullopt; };
          using K = CarbonRow::Kind;
          report.rows.push_back({K::kNode, "(node idle)", source, 0, iv->ColumnDouble(3), g(8), std::nullopt});
          report.rows.push_back({K::kNode, "(node overhead)", source, 0, iv->ColumnDouble(4), g(9), std::nullopt});
          if (iv->ColumnDouble(5) != 0) {
            report.rows.push_back({K::kNode, "(unaccounted)", source, 0, iv->ColumnDouble(5), g(10), std::nullopt});
          }
          report.rows.push_back(
              {K::kMeter, "= meter (intervals)", source, iv->ColumnInt64(1), iv->ColumnDouble(2), g(7), std::nullopt});
        });
        !s) {
      return std::unexpected(s.error());
    }
  }
  auto hours = db->Prepare(fmt::format(
      "SELECT {}, MIN(end_ns) / 3600000000000 * 3600, SUM(meter_total_j), SUM(meter_grams), "
      "SUM(CASE WHEN meter_grams IS NULL THEN 0 ELSE meter_total_j END) "
      "FROM intervals WHERE end_ns >= ?1 AND end_ns < ?2 GROUP BY 1 ORDER BY 1",
      kHourExpr));
  if (!hours) return std::unexpected(hours.error());
  hours->Bind(1, q.since_ns);
  hours->Bind(2, q.until_ns);
  if (auto s = ForEachRow(*hours, [&] {
        IntensityPoint p;
        p.hour = hours->ColumnText(0);
        p.hour_unix = hours->ColumnInt64(1);
        p.meter_joules = hours->ColumnDouble(2);
        p.meter_grams = hours->ColumnDouble(3);
        const double priced_j = hours->ColumnDouble(4);
        p.g_per_kwh = priced_j > 0 ? p.meter_grams / priced_j * 3.6e6 : 0.0;
        report.intensity.push_back(std::move(p));
      });
      !s) {
    return std::unexpected(s.error());
  }
  return report;
}

std::string CarbonReportJson(const CarbonReport& r) {
  const std::string_view key = GroupByName(r.group_by);
  std::string o = fmt::format("{{\"group_by\":\"{}\",\"rows\":[", key);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const CarbonRow& row = r.rows[i];
    o += fmt::format(
        "{}{{\"{}\":{},\"kind\":\"{}\",\"source\":{},\"calls\":{},\"joules\":{:.9g},\"grams_co2e\":{},"
        "\"embodied_grams\":{},\"intensity_kind\":{}}}",
        i ? "," : "", key, JsonString(row.key), KindName(row.kind), JsonString(row.source), row.calls, row.joules,
        JsonNumber(row.grams), JsonNumber(row.embodied),
        row.intensity_kind.empty() ? std::string("null") : JsonString(row.intensity_kind));
  }
  o += "],\"intensity\":[";
  for (std::size_t i = 0; i < r.intensity.size(); ++i) {
    const IntensityPoint& p = r.intensity[i];
    o += fmt::format("{}{{\"hour\":{},\"meter_joules\":{:.9g},\"meter_grams\":{:.9g},\"g_per_kwh\":{:.9g}}}",
                     i ? "," : "", JsonString(p.hour), p.meter_joules, p.meter_grams, p.g_per_kwh);
  }
  o += "]}";
  return o;
}

}  // namespace faasnode::billing
