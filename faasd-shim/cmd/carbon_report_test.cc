// carbon_report_test.cc — the HTML report is one self-contained page: a table of every row,
// bar charts per function (joules, grams) and the per-hour chart against the intensity curve.
#include "faasd-shim/cmd/carbon_report.h"

#include <gtest/gtest.h>

#include <string>

namespace faasnode {
namespace {

using billing::CarbonReport;
using billing::CarbonRow;

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(CarbonReportHtml, OneSelfContainedPageWithThreePlots) {
  CarbonReport by_fn;
  by_fn.rows = {{CarbonRow::Kind::kFunction, "echo", "model", 10, 0.5, 5e-5, 0.0},
                {CarbonRow::Kind::kFunction, "cpu<burn>", "model", 2, 4.0, 4e-4, 0.0},
                {CarbonRow::Kind::kNode, "(node idle)", "model", 0, 20.0, 2e-3, std::nullopt},
                {CarbonRow::Kind::kMeter, "= meter (intervals)", "model", 900, 24.5, 2.45e-3, std::nullopt}};
  CarbonReport by_hour;
  by_hour.group_by = billing::GroupBy::kHour;
  by_hour.rows = {{CarbonRow::Kind::kHour, "2026-12-02T15:00Z", "model", 4, 1.5, 1e-4, 0.0},
                  {CarbonRow::Kind::kHour, "2026-12-02T16:00Z", "model", 8, 3.0, 3e-4, 0.0}};
  by_hour.intensity = {{"2026-12-02T15:00Z", 0, 10.0, 1e-3, 240.0}, {"2026-12-02T16:00Z", 3600, 14.5, 1.45e-3, 360.0}};
  const std::string html = CarbonReportHtml(by_fn, by_hour, "t");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "<svg "), 3);
  EXPECT_EQ(Count(html, "</svg>"), 3);
  EXPECT_EQ(Count(html, "<script"), 0) << "no script";
  EXPECT_EQ(Count(html, "src="), 0) << "no external resource";
  EXPECT_EQ(Count(html, "href="), 0) << "no external resource";
  EXPECT_EQ(Count(html, "<tr"), 5) << "a header and one row per report row";
  EXPECT_NE(html.find("cpu&lt;burn&gt;"), std::string::npos) << "names are escaped";
  EXPECT_EQ(html.find("cpu<burn>"), std::string::npos);
  // Two function bar charts (2 bars each) + per hour 3 bars × 2 hours.
  EXPECT_EQ(Count(html, "<rect "), 2 * 2 + 3 * 2);
  EXPECT_EQ(Count(html, "<polyline "), 1) << "the intensity curve";
  EXPECT_NE(html.find("360 gCO2e/kWh"), std::string::npos);
  EXPECT_NE(html.find("model"), std::string::npos) << "figures carry their source";
}

TEST(CarbonReportHtml, EmptyRangeSaysSo) {
  const std::string html = CarbonReportHtml({}, {.group_by = billing::GroupBy::kHour}, "t");
  EXPECT_NE(html.find("no invocations in range"), std::string::npos);
  EXPECT_NE(html.find("no intervals in range"), std::string::npos);
  EXPECT_EQ(Count(html, "</svg>"), 3);
}

}  // namespace
}  // namespace faasnode
