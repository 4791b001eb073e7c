// replay_test.cc — ReplaySensor: parsing, playback through the IntervalMeter, round trip.
#include "energy/sensors/replay.h"

#include <gtest/gtest.h>

namespace energy {
namespace {

constexpr std::string_view kTrace =
    "# two packages, a wrap on package 0 in the second interval\n"
    "timestamp_ns,zone,domain,cumulative_uj,max_energy_range_uj\n"
    "1000000000,package,0,999000,1000000\n"
    "1000000000,package,1,10,\n"
    "1000000000,dram,0,5,0\n"
    "1010000000,package,0,999500,1000000\n"
    "1010000000,package,1,20,\n"
    "1010000000,dram,0,6,0\n"
    "1020000000,package,0,300,1000000\n"
    "1020000000,package,1,25,\n"
    "1020000000,dram,0,8,0\n";

TEST(ReplaySensorTest, PlaysSnapshotsThroughTheMeter) {
  auto r = ReplaySensor::Parse(kTrace);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  IntervalMeter meter;
  ASSERT_TRUE(meter.Add(*r->Read()));
  auto a = meter.Add(*r->Read());
  auto b = meter.Add(*r->Read());
  ASSERT_TRUE(a && a->has_value() && b && b->has_value());
  EXPECT_DOUBLE_EQ((*a)->joules[Zone::kPackage].value, 510e-6);
  EXPECT_DOUBLE_EQ((*b)->joules[Zone::kPackage].value, 805e-6);  // 500 + 300 wrapped, + 5
  EXPECT_DOUBLE_EQ((*b)->joules[Zone::kDram].value, 2e-6);
  EXPECT_EQ((*b)->wraps, 1u);
  EXPECT_EQ((*b)->joules.sources.ToString(), "replay");
  auto end = r->Read();
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code(), junction::ErrorCode::kClosed);
  r->Rewind();
  EXPECT_TRUE(r->Read());
}

TEST(ReplaySensorTest, RoundTripsThroughAppendTraceRows) {
  auto r = ReplaySensor::Parse(kTrace);
  ASSERT_TRUE(r);
  std::string text(kTraceHeader);
  for (const CounterSnapshot& s : r->snapshots()) AppendTraceRows(s, &text);
  auto again = ReplaySensor::Parse(text);
  ASSERT_TRUE(again) << again.error().message();
  ASSERT_EQ(again->size(), r->size());
  for (size_t i = 0; i < r->size(); ++i) {
    ASSERT_EQ(again->snapshots()[i].readings.size(), r->snapshots()[i].readings.size());
    for (size_t j = 0; j < r->snapshots()[i].readings.size(); ++j) {
      EXPECT_EQ(again->snapshots()[i].readings[j].cumulative,
                r->snapshots()[i].readings[j].cumulative);
    }
  }
}

TEST(ReplaySensorTest, ErrorsNameTheLine) {
  std::string bad(kTraceHeader);
  bad += "1,package,0,10,100\n2,pkg,0,20,100\n";
  auto r = ReplaySensor::Parse(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("line 3"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("unknown energy zone"), std::string::npos);
  EXPECT_FALSE(ReplaySensor::Parse("wrong,header\n1,package,0,1,2\n"));
  EXPECT_FALSE(ReplaySensor::Parse(std::string(kTraceHeader) + "5,package,0,1,\n4,package,0,2,\n"));
  EXPECT_FALSE(ReplaySensor::Parse(std::string(kTraceHeader) + "5,package,0,200,100\n"));
  EXPECT_FALSE(ReplaySensor::Parse(std::string(kTraceHeader)));
  auto missing = ReplaySensor::Load("/nonexistent/trace.csv");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent/trace.csv"), std::string::npos);
}

}  // namespace
}  // namespace energy
