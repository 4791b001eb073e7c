// carbon_query_test.cc — the report's SQL over a ledger written here: per-function and
// per-hour sums, the node's priced rows adding up to the meter, filters, unpriced intervals,
// the hourly intensity curve, and the JSON document.
#include "faasd-shim/billing/carbon_query.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "energy/ledger/ledger.h"

namespace faasnode::billing {
namespace {

constexpr std::int64_t kHour = 3'600'000'000'000LL;
constexpr std::int64_t kT0 = 1'796'000'000LL / 3600 * 3600 * 1'000'000'000LL;  // an hour boundary

energy::InvocationRecord Call(std::string_view fn, std::int64_t end_ns, double joules, double g_per_kwh) {
  energy::InvocationRecord r;
  r.call_id.Assign("c");
  r.function.Assign(fn);
  r.ns.Assign("openfaas-fn");
  r.start_ns = end_ns - 1000;
  r.end_ns = end_ns;
  r.joules.Set(energy::Zone::kPackage, energy::Joules{joules});
  r.joules.sources.Add(energy::Source::kModel);
  r.grams = energy::carbon::Grams(energy::Joules{joules}, g_per_kwh);
  r.intensity_g_per_kwh = g_per_kwh;
  r.status = 200;
  return r;
}

energy::IntervalRecord Interval(std::int64_t end_ns, double inv_j, double idle_j, double overhead_j,
                                std::optional<double> g_per_kwh) {
  energy::IntervalRecord r;
  r.begin_ns = end_ns - 10'000'000;
  r.end_ns = end_ns;
  r.meter.Set(energy::Zone::kPackage, energy::Joules{inv_j + idle_j + overhead_j});
  r.meter.sources.Add(energy::Source::kModel);
  r.invocations_j = inv_j;
  r.idle_j = idle_j;
  r.overhead_j = overhead_j;
  if (g_per_kwh) r.Price(*g_per_kwh);
  return r;
}

class CarbonQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test and process: ctest runs this fixture's tests in parallel
    // processes, and a shared directory let one test's SetUp delete another's ledger.
    const std::string dir = ::testing::TempDir() + "/carbon_query-" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                            std::to_string(getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path_ = dir + "/ledger.db";
  }
  // Three hours at 100, 200 and 300 g/kWh; "a" runs in every hour, "b" in the last.
  void Write(bool price_all) {
    auto l = energy::Ledger::Open({.path = path_});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    for (int h = 0; h < 3; ++h) {
      const double g = 100.0 * (h + 1);
      const std::int64_t t = kT0 + h * kHour + kHour / 2;
      ASSERT_TRUE((*l)->Push(0, Call("a", t, 2.0, g)).has_value());
      double inv = 2.0;
      if (h == 2) {
        ASSERT_TRUE((*l)->Push(0, Call("b", t, 6.0, g)).has_value());
        inv += 6.0;
      }
      const bool priced = price_all || h != 1;
      ASSERT_TRUE((*l)->PushInterval(Interval(t, inv, 10.0, 1.0, priced ? std::optional(g) : std::nullopt))
                      .has_value());
    }
    ASSERT_TRUE((*l)->Close().has_value());
  }
  std::string path_;
};

TEST_F(CarbonQueryTest, FunctionsAndTheNodeAddUpToTheMeterInJoulesAndGrams) {
  Write(true);
  auto r = QueryCarbon(path_, {});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  double fj = 0, fg = 0, nj = 0, ng = 0, mj = 0, mg = 0;
  for (const CarbonRow& row : r->rows) {
    ASSERT_TRUE(row.grams.has_value()) << row.key;
    EXPECT_EQ(row.source, "model");
    switch (row.kind) {
      case CarbonRow::Kind::kFunction: fj += row.joules; fg += *row.grams; break;
      case CarbonRow::Kind::kNode: nj += row.joules; ng += *row.grams; break;
      case CarbonRow::Kind::kMeter: mj += row.joules; mg += *row.grams; EXPECT_EQ(row.calls, 3); break;
      case CarbonRow::Kind::kHour: ADD_FAILURE() << "no hour rows when grouped by function"; break;
    }
  }
  EXPECT_DOUBLE_EQ(fj, 12.0);
  EXPECT_DOUBLE_EQ(nj, 33.0);
  EXPECT_DOUBLE_EQ(mj, 45.0);
  EXPECT_NEAR(fg + ng, mg, mg * 1e-12);
  // (13 J at 100) + (13 J at 200) + (19 J at 300) g/kWh.
  EXPECT_NEAR(mg, (13 * 100.0 + 13 * 200.0 + 19 * 300.0) / 3.6e6, 1e-15);
  ASSERT_EQ(r->intensity.size(), 3u);
  for (int h = 0; h < 3; ++h) {
    EXPECT_NEAR(r->intensity[h].g_per_kwh, 100.0 * (h + 1), 1e-9);
    EXPECT_EQ(r->intensity[h].hour_unix, kT0 / 1'000'000'000 + h * 3600);
  }
  EXPECT_EQ(r->intensity[0].hour.size(), std::string_view("2026-12-02T16:00Z").size());
}

TEST_F(CarbonQueryTest, ByHourFiltersAndUnpricedIntervals) {
  Write(false);
  auto hours = QueryCarbon(path_, {.group_by = GroupBy::kHour});
  ASSERT_TRUE(hours.has_value());
  ASSERT_EQ(hours->rows.size(), 3u);
  EXPECT_DOUBLE_EQ(hours->rows[2].joules, 8.0);
  EXPECT_EQ(hours->rows[2].calls, 2);
  auto only_b = QueryCarbon(path_, {.function = "b"});
  ASSERT_TRUE(only_b.has_value());
  ASSERT_EQ(only_b->rows.size(), 1u) << "a function's report has no node rows";
  EXPECT_EQ(only_b->rows[0].key, "b");
  auto last_hour = QueryCarbon(path_, {.since_ns = kT0 + 2 * kHour});
  ASSERT_TRUE(last_hour.has_value());
  for (const CarbonRow& row : last_hour->rows) {
    if (row.kind == CarbonRow::Kind::kMeter) {
      EXPECT_EQ(row.calls, 1);
    }
  }
  // The middle interval has no price: the node's grams over all three are not claimed.
  auto all = QueryCarbon(path_, {});
  ASSERT_TRUE(all.has_value());
  for (const CarbonRow& row : all->rows) {
    if (row.kind == CarbonRow::Kind::kNode || row.kind == CarbonRow::Kind::kMeter) {
      EXPECT_FALSE(row.grams.has_value()) << row.key;
    }
  }
  const std::string json = CarbonReportJson(*all);
  EXPECT_NE(json.find("\"group_by\":\"function\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kind\":\"meter\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"grams_co2e\":null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"intensity\":[{\"hour\""), std::string::npos) << json;
}

// Each row says whether its grams were priced at measured, interpolated or held intensity.
TEST_F(CarbonQueryTest, RowsSayHowTheirIntensityWasObtained) {
  {
    auto l = energy::Ledger::Open({.path = path_});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    const std::int64_t t = kT0 + kHour / 2;
    energy::InvocationRecord measured = Call("a", t, 1.0, 100.0);
    measured.intensity_kind = energy::carbon::IntensityKind::kMeasured;
    energy::InvocationRecord held = Call("a", t + kHour, 1.0, 100.0);
    held.intensity_kind = energy::carbon::IntensityKind::kHeld;
    energy::InvocationRecord interpolated = Call("b", t, 1.0, 150.0);
    interpolated.intensity_kind = energy::carbon::IntensityKind::kInterpolated;
    for (const auto* r : {&held, &measured, &held, &interpolated}) {
      ASSERT_TRUE((*l)->Push(0, *r).has_value());
    }
    ASSERT_TRUE((*l)->PushInterval(Interval(t, 3.0, 1.0, 0.0, 100.0)).has_value());
    ASSERT_TRUE((*l)->Close().has_value());
  }
  auto r = QueryCarbon(path_, {});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  std::map<std::string, std::string> kinds;
  for (const CarbonRow& row : r->rows) kinds[row.key] = row.intensity_kind;
  EXPECT_EQ(kinds["a"], "measured+held");
  EXPECT_EQ(kinds["b"], "interpolated");
  EXPECT_EQ(kinds["(node idle)"], "") << "intervals store no kind";
  auto hours = QueryCarbon(path_, {.group_by = GroupBy::kHour});
  ASSERT_TRUE(hours.has_value());
  ASSERT_EQ(hours->rows.size(), 2u);
  EXPECT_EQ(hours->rows[0].intensity_kind, "measured+interpolated");
  EXPECT_EQ(hours->rows[1].intensity_kind, "held");
  const std::string json = CarbonReportJson(*r);
  EXPECT_NE(json.find("\"embodied_grams\":0,\"intensity_kind\":\"measured+held\"}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"intensity_kind\":null"), std::string::npos) << json;
}

TEST_F(CarbonQueryTest, MissingLedgerIsNotFoundWithAHint) {
  auto r = QueryCarbon(path_ + ".absent", {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), junction::ErrorCode::kNotFound);
  EXPECT_NE(r.error().message().find("[energy]"), std::string::npos);
  EXPECT_FALSE(ParseGroupBy("day").has_value());
}

// Calls the ledger folded into overflow_aggregates because its queue was full are still billed:
// the report counts them with their function, and the functions add up to the meter.
TEST_F(CarbonQueryTest, CallsFoldedByAFullLedgerQueueAreInTheReport) {
  constexpr int kCalls = 400;
  std::uint64_t aggregated = 0;
  {
    auto l = energy::Ledger::Open({.path = path_, .producers = 1, .queue_capacity = 8, .max_batch = 8,
                                   .flush_interval = std::chrono::milliseconds(200)});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    for (int i = 0; i < kCalls; ++i) {
      auto r = (*l)->Push(0, Call("a", kT0 + kHour / 2 + i, 0.5, 100.0));
      ASSERT_TRUE(r.has_value());
      if (r->aggregated) ++aggregated;
    }
    ASSERT_TRUE((*l)->PushInterval(Interval(kT0 + kHour / 2 + kCalls, 0.5 * kCalls, 10.0, 1.0, 100.0))
                    .has_value());
    ASSERT_TRUE((*l)->Close().has_value());
  }
  ASSERT_GT(aggregated, 0u) << "the queue never filled: the test proves nothing";
  auto r = QueryCarbon(path_, CarbonQuery{});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  double functions_j = 0, node_j = 0, meter_j = 0;
  long long calls = 0;
  for (const CarbonRow& row : r->rows) {
    if (row.kind == CarbonRow::Kind::kFunction) {
      functions_j += row.joules;
      calls += row.calls;
    } else if (row.kind == CarbonRow::Kind::kNode) {
      node_j += row.joules;
    } else if (row.kind == CarbonRow::Kind::kMeter) {
      meter_j += row.joules;
    }
  }
  EXPECT_EQ(calls, kCalls) << aggregated << " of them were folded";
  EXPECT_NEAR(functions_j, 0.5 * kCalls, 1e-9);
  EXPECT_NEAR(functions_j + node_j, meter_j, 1e-9);
}

// A running node may hold calls in packs (its ledger writer was behind; ledger.h "Packs"): the
// report counts them as it will count their rows once expanded, per function and per hour.
TEST_F(CarbonQueryTest, CallsStillInPacksReportAsTheirRowsWill) {
  auto l = energy::Ledger::Open(
      {.path = path_, .flush_interval = std::chrono::milliseconds(5), .pack_at = 1, .expand_delay = std::chrono::hours(1)});
  ASSERT_TRUE(l.has_value()) << l.error().message();
  std::uint64_t pushed = 0;
  for (int h = 0; h < 3; ++h) {
    const std::int64_t t = kT0 + h * kHour + kHour / 2;
    for (int k = 0; k < 3; ++k) {
      energy::InvocationRecord r = Call(h == 2 && k == 0 ? "b" : "a", t + k, 1.0 + k, 100.0 * (h + 1));
      if (h == 1) r.intensity_kind = energy::carbon::IntensityKind::kHeld;
      ASSERT_TRUE((*l)->Push(0, r).has_value());
      ++pushed;
    }
  }
  for (int i = 0; i < 2000 && (*l)->stats().records_packed < pushed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ((*l)->stats().records_packed, pushed) << "the calls were not packed";
  auto by_function = QueryCarbon(path_, {});
  auto by_hour = QueryCarbon(path_, {.group_by = GroupBy::kHour});
  ASSERT_TRUE(by_function.has_value()) << by_function.error().message();
  ASSERT_TRUE(by_hour.has_value()) << by_hour.error().message();
  const CarbonQuery cut{.since_ns = kT0 + kHour / 2 + 1, .until_ns = kT0 + 2 * kHour + kHour / 2 + 2};
  CarbonQuery cut_by_hour = cut;
  cut_by_hour.group_by = GroupBy::kHour;
  auto packed_cut = QueryCarbon(path_, cut);
  auto packed_cut_hour = QueryCarbon(path_, cut_by_hour);
  ASSERT_TRUE(packed_cut.has_value() && packed_cut_hour.has_value());
  ASSERT_TRUE((*l)->Close().has_value());  // expands the packs into rows
  EXPECT_EQ((*l)->stats().records_expanded, pushed);
  auto rows_function = QueryCarbon(path_, {});
  auto rows_hour = QueryCarbon(path_, {.group_by = GroupBy::kHour});
  ASSERT_TRUE(rows_function.has_value() && rows_hour.has_value());
  auto same = [](const CarbonReport& packed, const CarbonReport& rows) {
    ASSERT_EQ(packed.rows.size(), rows.rows.size());
    for (std::size_t i = 0; i < rows.rows.size(); ++i) {
      SCOPED_TRACE(rows.rows[i].key);
      EXPECT_EQ(packed.rows[i].key, rows.rows[i].key);
      EXPECT_EQ(packed.rows[i].calls, rows.rows[i].calls);
      EXPECT_NEAR(packed.rows[i].joules, rows.rows[i].joules, 1e-12);
      ASSERT_TRUE(packed.rows[i].grams && rows.rows[i].grams);
      EXPECT_NEAR(*packed.rows[i].grams, *rows.rows[i].grams, 1e-15);
      EXPECT_EQ(packed.rows[i].intensity_kind, rows.rows[i].intensity_kind);
    }
  };
  same(*by_function, *rows_function);
  same(*by_hour, *rows_hour);
  // A window that cuts through a pack at each end counts the records inside it, as the rows do.
  auto rows_cut = QueryCarbon(path_, cut);
  auto rows_cut_hour = QueryCarbon(path_, cut_by_hour);
  ASSERT_TRUE(rows_cut.has_value() && rows_cut_hour.has_value());
  same(*packed_cut, *rows_cut);
  same(*packed_cut_hour, *rows_cut_hour);
  ASSERT_EQ(rows_cut->rows.size(), 2u);
  EXPECT_EQ(rows_cut->rows[0].calls, 2 + 3 + 1);  // a: 2 of hour 0, all 3 of hour 1, 1 of hour 2
  EXPECT_EQ(rows_cut->rows[1].calls, 1);          // b: its one call, at the start of hour 2
  ASSERT_EQ(rows_function->rows.size(), 2u);
  EXPECT_EQ(rows_function->rows[0].key, "a");
  EXPECT_EQ(rows_function->rows[0].calls, 8);
  EXPECT_EQ(rows_function->rows[0].intensity_kind, "held+constant");
  ASSERT_EQ(rows_hour->rows.size(), 3u);
  EXPECT_EQ(rows_hour->rows[1].intensity_kind, "held");
}

}  // namespace
}  // namespace faasnode::billing
