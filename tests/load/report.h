// report.h — faasload's outputs: the text summary, the JSON document, the .hgrm distribution.
#pragma once

#include <string>

#include "tests/load/load_generator.h"

namespace faasload {

struct ReportInfo {
  std::string url;
  std::string backend;
  int cores = 1;
};

std::string TextSummary(const LoadResult& r, const ReportInfo& info);
// The JSON document of tests/load/README.md (one line).
std::string JsonReport(const LoadResult& r, const ReportInfo& info);
// Percentile distribution: "# percentile value_us count" then one line per step.
std::string HgrmReport(const Histogram& h);

}  // namespace faasload
