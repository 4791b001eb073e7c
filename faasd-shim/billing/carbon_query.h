// carbon_query.h — the carbon bill read back from the ledger: joules and gCO2e per function
// (or per hour), the node's own idle/overhead share, the meter, and the hourly intensity
// curve. Shared by `faasnode carbon report` and GET /system/carbon, so both say the same.
//
//   auto report = billing::QueryCarbon("faasnode-state/ledger.db", {.group_by = GroupBy::kHour});
//   if (!report) { ... report.error().message() ... }
//   std::string json = billing::CarbonReportJson(*report);
//
// Per function, invocation rows + the node's rows (idle, overhead, unaccounted) add up to the
// meter's row, in joules and in grams, source by source (each interval's classes are priced
// at that interval's mean intensity). Opens the ledger read-only (WAL: a running node keeps
// writing); blocks on SQLite file reads for the length of the query.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "junction/base/error.h"

namespace faasnode::billing {

enum class GroupBy : std::uint8_t { kFunction, kHour };

struct CarbonQuery {
  std::string function;  // only this function; empty: all (and then the node's rows too)
  std::int64_t since_ns = 0;
  std::int64_t until_ns = std::numeric_limits<std::int64_t>::max();
  GroupBy group_by = GroupBy::kFunction;
};

struct CarbonRow {
  enum class Kind : std::uint8_t { kFunction, kHour, kNode, kMeter };
  Kind kind = Kind::kFunction;
  std::string key;     // the function, the hour (2026-12-02T16:00Z), "(node idle)", ...
  std::string source;  // rapl, nvml, model, replay, or a mix: "rapl+nvml"
  long long calls = 0;  // invocations (kMeter: intervals)
  double joules = 0.0;
  std::optional<double> grams;     // absent where the ledger has no price (version-1 rows)
  std::optional<double> embodied;  // invocation rows only
  // Invocation rows only: the carbon intensities their grams were priced at, as the ledger's
  // intensity_kind says: the kinds present, in the order measured, interpolated, held,
  // constant, joined by '+' ("measured+held": some calls fell in a trace gap and were priced at
  // the held value). Empty for the node's and the meter's rows (intervals store no kind).
  // Default-initialised so that positional initialisers may leave it out.
  std::string intensity_kind{};
};

// One hour of the meter: energy and the energy-weighted mean intensity.
struct IntensityPoint {
  std::string hour;  // 2026-12-02T16:00Z
  std::int64_t hour_unix = 0;
  double meter_joules = 0.0;
  double meter_grams = 0.0;
  double g_per_kwh = 0.0;  // meter_grams / meter_joules × 3.6e6 (0 with no priced energy)
};

struct CarbonReport {
  GroupBy group_by = GroupBy::kFunction;
  std::vector<CarbonRow> rows;               // ordered by key, then source; node rows last
  std::vector<IntensityPoint> intensity;     // every hour of the meter in range
};

// "function" / "hour"; ParseGroupBy: kInvalidArgument naming the accepted values.
std::string_view GroupByName(GroupBy g);
junction::Status<GroupBy> ParseGroupBy(std::string_view s);

// Errors: kNotFound when there is no ledger at `ledger_path` (the message says how to make
// one); kIo / SQLite errors when it cannot be read.
junction::Status<CarbonReport> QueryCarbon(const std::string& ledger_path, const CarbonQuery& query);

// {"group_by": "function", "rows": [{"function": ..., "kind": "function|node|meter",
//  "source": ..., "calls": n, "joules": x, "grams_co2e": x|null, "embodied_grams": x|null,
//  "intensity_kind": "measured+held"|null}],
//  "intensity": [{"hour": ..., "meter_joules": x, "meter_grams": x, "g_per_kwh": x}]}
std::string CarbonReportJson(const CarbonReport& report);

}  // namespace faasnode::billing
