// energy_biller_test.cc — the node's biller end to end under a replayed meter: every billed
// invocation, the node's idle and overhead add up to the meter's joules for the run, each
// figure labelled with the meter's source; the estimate at completion uses the same rate;
// forcing a meter that is absent fails at start with a message saying what to set.
#include "faasd-shim/billing/energy_biller.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "energy/sensors/replay.h"
#include "faasd-shim/billing/call_cycles.h"
#include "faasd-shim/billing/carbon_query.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"
#include "junction/sched/tsc.h"

namespace faasnode::billing {
namespace {

using namespace std::chrono_literals;

std::string FreshLedger(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/biller_" + name;
  std::filesystem::remove_all(dir);
  return dir + "/ledger.db";
}

// A package counter that rises by exactly 1000 uJ (1 mJ) per read, for `reads` reads.
energy::ReplaySensor Trace(int reads) {
  std::string text(energy::kTraceHeader);
  for (int i = 0; i < reads; ++i) {
    text += std::to_string(1'700'000'000'000'000'000LL + i * 10'000'000LL) + ",package,0," +
            std::to_string(5'000'000 + i * 1000) + ",262143328850\n";
  }
  auto s = energy::ReplaySensor::Parse(text);
  EXPECT_TRUE(s.has_value()) << s.error().message();
  return std::move(*s);
}

void Burn(std::chrono::microseconds d) {
  const auto until = junction::sched::Clock::now() + d;
  while (junction::sched::Clock::now() < until) {
  }
}

TEST(EnergyBiller, InvocationsAndNodeAddUpToAReplayedMeter) {
  auto rt = junction::sched::Runtime::Create({.cores = junction::sched::testing::FirstCpus(2)});
  ASSERT_TRUE(rt.has_value()) << rt.error().message();
  energy::ReplaySensor meter = Trace(100000);
  const std::string ledger = FreshLedger("replay");
  std::uint64_t intervals = 0;
  CallEstimate estimate;
  bool on_cpu = false;
  std::vector<std::string> billed;
  std::uint64_t light_cycles = 0, heavy_cycles = 0;
  ASSERT_TRUE((*rt)->Run([&] {
    BillingOptions o;
    o.interval = 2ms;
    o.ledger_path = ledger;
    o.meter_source = &meter;
    o.on_bill = [&](const energy::InvocationRecord& r) {
      billed.emplace_back(r.function.view());
      (r.function.view() == "heavy" ? heavy_cycles : light_cycles) += r.cycles;
    };
    auto b = EnergyBiller::Start(junction::sched::Runtime::Current(), o);
    ASSERT_TRUE(b.has_value()) << b.error().message();
    EXPECT_EQ((*b)->meter_sources(), energy::SourceSet(energy::Source::kReplay));
    static constexpr std::string_view kFns[] = {"light", "heavy"};
    for (int i = 0; i < 40; ++i) {
      const std::uint64_t account = 1000 + i;
      const junction::sched::AccountId before = junction::sched::CurrentAccount();
      junction::sched::SetAccount(account);
      const CallCycles cc;
      Burn(std::chrono::microseconds(i % 2 == 0 ? 200 : 600));
      const CallCycles::Result ran = cc.End();
      junction::sched::SetAccount(before);
      if (i == 39) {
        estimate = (*b)->EstimateCall(ran.cycles);
        on_cpu = ran.on_cpu;
      }
      (*b)->Complete({.account = account, .call_id = std::to_string(i), .function = kFns[i % 2],
                      .ns = "openfaas-fn", .start_ns = 1, .end_ns = 2, .status = 200});
      junction::sched::SleepFor(1ms);
    }
    ASSERT_TRUE((*b)->Stop().has_value());
    intervals = (*b)->intervals();
  }).has_value());
  ASSERT_GE(intervals, 2u);  // about 30 on a quiet machine; a loaded one closes fewer, longer ones
  EXPECT_EQ(billed.size(), 40u);
  // The estimate: the replayed rate (1 mJ per interval over all cycles of both cores).
  EXPECT_EQ(estimate.sources, energy::SourceSet(energy::Source::kReplay));
  EXPECT_GT(estimate.joules, 0.0);
  EXPECT_NEAR(estimate.grams, estimate.joules / 3.6e6 * 400.0, estimate.grams * 1e-9);  // 400 g/kWh
  EXPECT_TRUE(on_cpu) << "a call that did not yield is measured exactly";

  auto report = QueryCarbon(ledger, {});
  ASSERT_TRUE(report.has_value()) << report.error().message();
  double functions_j = 0, node_j = 0, meter_j = 0, functions_g = 0, node_g = 0, meter_g = 0;
  long long calls = 0, meter_rows = 0;
  for (const CarbonRow& r : report->rows) {
    EXPECT_EQ(r.source, "replay") << r.key;
    ASSERT_TRUE(r.grams.has_value()) << r.key << ": every row is priced";
    if (r.kind == CarbonRow::Kind::kFunction) {
      functions_j += r.joules;
      functions_g += *r.grams;
      calls += r.calls;
    } else if (r.kind == CarbonRow::Kind::kNode) {
      node_j += r.joules;
      node_g += *r.grams;
    } else {
      meter_j += r.joules;
      meter_g += *r.grams;
      meter_rows = r.calls;
    }
  }
  EXPECT_EQ(calls, 40);
  EXPECT_EQ(meter_rows, static_cast<long long>(intervals));
  // The meter is the trace: exactly 1 mJ per interval billed.
  EXPECT_NEAR(meter_j, 1e-3 * static_cast<double>(intervals), 1e-9);
  EXPECT_NEAR(functions_j + node_j, meter_j, meter_j * 1e-9);
  EXPECT_NEAR(functions_g + node_g, meter_g, meter_g * 1e-9);
  EXPECT_NEAR(meter_g, meter_j / 3.6e6 * 400.0, meter_g * 1e-9);  // the default 400 g/kWh
  ASSERT_EQ(report->intensity.size(), 1u);
  EXPECT_NEAR(report->intensity[0].g_per_kwh, 400.0, 1e-6);
  // heavy burned 3x light's time: more cycles billed (joules per cycle vary with each replayed
  // interval's length here; the 1:3 accuracy under a steady meter is attribution_test's).
  EXPECT_GT(heavy_cycles, light_cycles);
  EXPECT_GT(light_cycles, 0u);
}

// With idle and overhead shared out, the node keeps no idle/overhead joules: the functions
// (plus time no account ran, if any) add up to the meter, and the estimate rate includes the
// shared classes.
TEST(EnergyBiller, SharedIdleAndOverheadGoToTheInvocations) {
  auto rt = junction::sched::Runtime::Create({.cores = junction::sched::testing::FirstCpus(1)});
  ASSERT_TRUE(rt.has_value()) << rt.error().message();
  energy::ReplaySensor meter = Trace(100000);
  const std::string ledger = FreshLedger("shared");
  ASSERT_TRUE((*rt)->Run([&] {
    BillingOptions o;
    o.interval = 2ms;
    o.ledger_path = ledger;
    o.meter_source = &meter;
    o.attribution = {.idle = energy::SharePolicy::kShareToInvocations,
                     .overhead = energy::SharePolicy::kShareToInvocations};
    auto b = EnergyBiller::Start(junction::sched::Runtime::Current(), o);
    ASSERT_TRUE(b.has_value()) << b.error().message();
    for (int i = 0; i < 20; ++i) {
      const junction::sched::AccountId before = junction::sched::CurrentAccount();
      junction::sched::SetAccount(5000 + i);
      Burn(300us);
      junction::sched::SetAccount(before);
      (*b)->Complete({.account = 5000u + i, .call_id = "c", .function = "f", .ns = "openfaas-fn", .start_ns = 1,
                      .end_ns = 2, .status = 200});
      junction::sched::SleepFor(3ms);  // every interval sees a call
    }
    ASSERT_TRUE((*b)->Stop().has_value());
  }).has_value());
  auto report = QueryCarbon(ledger, {});
  ASSERT_TRUE(report.has_value()) << report.error().message();
  double f = 0, idle = 0, overhead = 0, unaccounted = 0, m = 0;
  for (const CarbonRow& r : report->rows) {
    if (r.key == "f") f = r.joules;
    if (r.key == "(node idle)") idle = r.joules;
    if (r.key == "(node overhead)") overhead = r.joules;
    if (r.key == "(unaccounted)") unaccounted = r.joules;
    if (r.kind == CarbonRow::Kind::kMeter) m = r.joules;
  }
  ASSERT_GT(m, 0.0);
  EXPECT_NEAR(f + idle + overhead + unaccounted, m, m * 1e-9);
  // Intervals with no call keep their idle (nobody to share it with): a small part.
  EXPECT_GT(f, 0.5 * m) << "shared out, the function pays for most of the meter";
}

TEST(EnergyBiller, ForcingAnAbsentMeterFailsAtStart) {
  if (std::filesystem::exists("/sys/class/powercap/intel-rapl")) {
    GTEST_SKIP() << "this machine has RAPL: forcing it succeeds";
  }
  auto rt = junction::sched::Runtime::Create({.cores = junction::sched::testing::FirstCpus(1)});
  ASSERT_TRUE(rt.has_value());
  ASSERT_TRUE((*rt)->Run([&] {
    BillingOptions o;
    o.ledger_path = FreshLedger("rapl");
    o.meter = MeterChoice::kRapl;
    auto b = EnergyBiller::Start(junction::sched::Runtime::Current(), o);
    ASSERT_FALSE(b.has_value());
    EXPECT_NE(b.error().message().find("energy.meter = \"rapl\""), std::string::npos) << b.error().message();
    o.meter = MeterChoice::kAuto;
    o.gpu = GpuMeterChoice::kOff;
    auto ok = EnergyBiller::Start(junction::sched::Runtime::Current(), o);
    ASSERT_TRUE(ok.has_value()) << ok.error().message();
    EXPECT_EQ((*ok)->meter_sources(), energy::SourceSet(energy::Source::kModel));
    EXPECT_NE((*ok)->meter_description().find("power model"), std::string::npos);
    ASSERT_TRUE((*ok)->Stop().has_value());
  }).has_value());
}

}  // namespace
}  // namespace faasnode::billing
