// carbon_report.h — `faasnode carbon report`: joules and grams per function (or per hour)
// from the energy ledger, beside the node's idle and overhead, adding up to the meter; as a
// table, CSV, JSON (the same document GET /system/carbon serves) or one self-contained HTML
// page with inline SVG plots.
#pragma once

#include <string>

#include "faasd-shim/billing/carbon_query.h"

namespace faasnode {

struct CarbonReportOptions {
  std::string ledger_path;
  std::string function;   // only this function; empty: all
  std::string since;      // ISO 8601 or unix seconds; empty: the beginning
  std::string until;      // likewise; empty: now
  std::string group_by = "function";  // function | hour
  std::string format = "table";       // table | csv | json | html
};

// Prints the report to stdout. Returns the exit code: 0, 2 for bad input (unknown format,
// bad time, missing ledger), 1 when the ledger cannot be read.
int RunCarbonReport(const CarbonReportOptions& options);

// The HTML page: per-function joules and grams (bars), per-hour joules and grams against the
// hourly intensity curve; no script, no external resource. `by_function` and `by_hour` are
// the same query grouped both ways.
std::string CarbonReportHtml(const billing::CarbonReport& by_function, const billing::CarbonReport& by_hour,
                             const std::string& title);

}  // namespace faasnode
