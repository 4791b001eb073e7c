// carbon_report.h — `faasnode carbon report`: joules and grams per function (or per hour)
// from the energy ledger, beside the node's idle and overhead, adding up to the meter.
#pragma once

#include <string>

namespace faasnode {

struct CarbonReportOptions {
  std::string ledger_path;
  std::string function;   // only this function; empty: all
  std::string since;      // ISO 8601 or unix seconds; empty: the beginning
  std::string until;      // likewise; empty: now
  std::string group_by = "function";  // function | hour
  std::string format = "table";       // table | csv | json
};

// Prints the report to stdout. Returns the exit code: 0, 2 for bad input (unknown format,
// bad time, missing ledger), 1 when the ledger cannot be read.
int RunCarbonReport(const CarbonReportOptions& options);

}  // namespace faasnode
