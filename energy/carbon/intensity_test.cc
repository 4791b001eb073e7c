// intensity_test.cc — carbon intensity: timestamps, gaps held and interpolated, an hour
// boundary inside one invocation, the shipped traces, repeat and errors.
#include "energy/carbon/intensity.h"

#include <ctime>
#include <string>

#include <gtest/gtest.h>

namespace energy::carbon {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kHour = 3600 * kSec;

int64_t Utc(int y, int mo, int d, int h, int mi = 0, int s = 0) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) * kSec;
}

// 01:00 is an empty field, 03:00 is a missing row.
constexpr std::string_view kGappy =
    "timestamp,gco2e_per_kwh\n"
    "2022-01-01 00:00:00+00:00,100\n"
    "2022-01-01 01:00:00+00:00,\n"
    "2022-01-01 02:00:00+00:00,300\n"
    "2022-01-01 04:00:00+00:00,500\n";

TEST(TimestampTest, IsoAndUnixAgreeWithTimegm) {
  EXPECT_EQ(*ParseTimestamp("2022-01-01 00:00:00+00:00"), Utc(2022, 1, 1, 0));
  EXPECT_EQ(*ParseTimestamp("2022-06-13T18:00:00Z"), Utc(2022, 6, 13, 18));
  EXPECT_EQ(*ParseTimestamp("2024-02-29 12:30:15"), Utc(2024, 2, 29, 12, 30, 15));
  EXPECT_EQ(*ParseTimestamp("2022-01-01 01:00:00+01:00"), Utc(2022, 1, 1, 0));
  EXPECT_EQ(*ParseTimestamp("2022-01-01 00:00:00.5Z"), Utc(2022, 1, 1, 0) + kSec / 2);
  EXPECT_EQ(*ParseTimestamp("1640995200"), Utc(2022, 1, 1, 0));
  EXPECT_FALSE(ParseTimestamp("2022-13-01 00:00:00"));
  EXPECT_FALSE(ParseTimestamp("yesterday"));
}

TEST(IntensityTest, GapsHeldSayHeld) {
  auto s = IntensitySource::FromCsvText(kGappy, {.gaps = GapPolicy::kHold});
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->step_ns(), kHour);
  auto at = [&](int h, int mi) { return *s->At(Utc(2022, 1, 1, h, mi)); };
  EXPECT_EQ(at(0, 30).g_per_kwh, 100);
  EXPECT_EQ(at(0, 30).kind, IntensityKind::kMeasured);
  EXPECT_EQ(at(1, 30).g_per_kwh, 100);
  EXPECT_EQ(at(1, 30).kind, IntensityKind::kHeld);
  EXPECT_EQ(at(2, 10).kind, IntensityKind::kMeasured);
  EXPECT_EQ(at(3, 30).g_per_kwh, 300);  // missing row
  EXPECT_EQ(at(3, 30).kind, IntensityKind::kHeld);
  EXPECT_EQ(at(4, 59).g_per_kwh, 500);
  auto outside = s->At(Utc(2022, 1, 1, 5));
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), junction::ErrorCode::kNotFound);
  EXPECT_FALSE(s->At(Utc(2021, 12, 31, 23)));
}

TEST(IntensityTest, GapsInterpolatedSayInterpolated) {
  auto s = IntensitySource::FromCsvText(kGappy, {.gaps = GapPolicy::kInterpolate});
  ASSERT_TRUE(s);
  auto a = *s->At(Utc(2022, 1, 1, 1, 30));
  EXPECT_DOUBLE_EQ(a.g_per_kwh, 100 + 200 * 0.75);
  EXPECT_EQ(a.kind, IntensityKind::kInterpolated);
  auto b = *s->At(Utc(2022, 1, 1, 3, 30));
  EXPECT_DOUBLE_EQ(b.g_per_kwh, 300 + 200 * 0.75);
  EXPECT_EQ(b.kind, IntensityKind::kInterpolated);
  EXPECT_EQ(s->At(Utc(2022, 1, 1, 2, 30))->kind, IntensityKind::kMeasured);
}

TEST(IntensityTest, MeanOverAGapIsExactAndSaysWhichKind) {
  auto held = IntensitySource::FromCsvText(kGappy, {.gaps = GapPolicy::kHold});
  auto interp = IntensitySource::FromCsvText(kGappy, {.gaps = GapPolicy::kInterpolate});
  ASSERT_TRUE(held && interp);
  int64_t b = Utc(2022, 1, 1, 0, 30), e = Utc(2022, 1, 1, 1, 30);
  auto h = *held->MeanOver(b, e);
  EXPECT_DOUBLE_EQ(h.g_per_kwh, 100);
  EXPECT_EQ(h.kind, IntensityKind::kHeld);
  // Half an hour at 100, then the line 100 -> 300 over 2 h from 01:00 to 01:30 (mean 225).
  auto i = *interp->MeanOver(b, e);
  EXPECT_NEAR(i.g_per_kwh, (100 + 225) / 2.0, 1e-9);
  EXPECT_EQ(i.kind, IntensityKind::kInterpolated);
  auto m = *held->MeanOver(Utc(2022, 1, 1, 2, 0), Utc(2022, 1, 1, 2, 59));
  EXPECT_EQ(m.kind, IntensityKind::kMeasured);
}

TEST(CarbonModelTest, HourBoundaryInsideOneInvocation) {
  auto s = IntensitySource::FromCsvText(
      "timestamp,gco2e_per_kwh\n2022-03-01 00:00:00Z,200\n2022-03-01 01:00:00Z,400\n", {});
  ASSERT_TRUE(s);
  auto model = CarbonModel::Create(std::move(*s), {.embodied_g_per_core_second = 0.001});
  ASSERT_TRUE(model);
  // 120 J spent evenly from 00:59 to 01:01: 60 J at 200 g/kWh, 60 J at 400 g/kWh.
  auto p = model->PriceInterval(Joules{120}, Utc(2022, 3, 1, 0, 59), Utc(2022, 3, 1, 1, 1), 2.0);
  ASSERT_TRUE(p) << p.error().message();
  double expect = 60.0 / 3.6e6 * 200 + 60.0 / 3.6e6 * 400;
  EXPECT_NEAR(p->grams, expect, 1e-15);
  EXPECT_DOUBLE_EQ(p->intensity.g_per_kwh, 300);
  EXPECT_EQ(p->intensity.kind, IntensityKind::kMeasured);
  EXPECT_DOUBLE_EQ(p->embodied_grams, 0.002);
  // Pricing it at either end's intensity alone would be wrong by a third.
  EXPECT_GT(std::abs(p->grams - Grams(Joules{120}, 200)), expect / 4);
}

TEST(IntensityTest, ShippedTracesLoadWithTheirGaps) {
  for (const char* name : {"us-ca", "us-ny", "us-tx", "us-wa"}) {
    auto s = IntensitySource::FromCsvFile(
        std::string(FAASNODE_CARBON_DIR) + "/" + name + "-2022-hourly.csv", {});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->rows(), 8760u) << name;
    EXPECT_EQ(s->begin_ns(), Utc(2022, 1, 1, 0));
    EXPECT_EQ(s->end_ns(), Utc(2023, 1, 1, 0));
  }
  auto held = IntensitySource::FromCsvFile(
      std::string(FAASNODE_CARBON_DIR) + "/us-ca-2022-hourly.csv", {.gaps = GapPolicy::kHold});
  auto interp =
      IntensitySource::FromCsvFile(std::string(FAASNODE_CARBON_DIR) + "/us-ca-2022-hourly.csv",
                                   {.gaps = GapPolicy::kInterpolate});
  ASSERT_TRUE(held && interp);
  auto before = *held->At(Utc(2022, 1, 5, 9, 30));
  auto after = *held->At(Utc(2022, 1, 5, 11, 30));
  ASSERT_EQ(before.kind, IntensityKind::kMeasured);
  auto gap = *held->At(Utc(2022, 1, 5, 10, 0));
  EXPECT_EQ(gap.kind, IntensityKind::kHeld);
  EXPECT_EQ(gap.g_per_kwh, before.g_per_kwh);
  auto mid = *interp->At(Utc(2022, 1, 5, 10, 0));
  EXPECT_EQ(mid.kind, IntensityKind::kInterpolated);
  EXPECT_DOUBLE_EQ(mid.g_per_kwh, (before.g_per_kwh + after.g_per_kwh) / 2);
}

TEST(IntensityTest, RepeatMapsOtherYearsIntoTheTrace) {
  auto s = IntensitySource::FromCsvText(kGappy, {.out_of_range = OutOfRangePolicy::kRepeat});
  ASSERT_TRUE(s);
  // The trace spans 5 hours; 05:30 maps to 00:30, 10:30 to 00:30, -01:30 (previous day) to 03:30.
  EXPECT_EQ(s->At(Utc(2022, 1, 1, 5, 30))->g_per_kwh, 100);
  EXPECT_EQ(s->At(Utc(2022, 1, 1, 10, 30))->g_per_kwh, 100);
  EXPECT_EQ(s->At(Utc(2021, 12, 31, 22, 30))->g_per_kwh, 300);
  auto mean = s->MeanOver(Utc(2022, 1, 1, 4, 30), Utc(2022, 1, 1, 5, 30));
  ASSERT_TRUE(mean);
  EXPECT_DOUBLE_EQ(mean->g_per_kwh, (500 + 100) / 2.0);
}

TEST(IntensityTest, ConstantAndErrors) {
  auto c = IntensitySource::Constant(420);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->At(12345)->kind, IntensityKind::kConstant);
  EXPECT_EQ(c->MeanOver(0, 10 * kHour)->g_per_kwh, 420);
  EXPECT_FALSE(IntensitySource::Constant(-1));
  auto bad = IntensitySource::FromCsvText("t,v\n2022-01-01 00:00:00Z,12\n2022-01-01 01:00:00Z,x\n",
                                          {}, "t.csv");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("t.csv line 3"), std::string::npos) << bad.error().message();
  EXPECT_FALSE(
      IntensitySource::FromCsvText("t,v\n2022-01-01 01:00:00Z,1\n2022-01-01 00:00:00Z,2\n", {}));
  EXPECT_FALSE(IntensitySource::FromCsvText("t,v\n2022-01-01 00:00:00Z,\n", {}));
  EXPECT_FALSE(IntensitySource::FromCsvFile("/nonexistent.csv", {}));
  EXPECT_FALSE(CarbonModel::Create(*IntensitySource::Constant(1), {-1.0}));
}

}  // namespace
}  // namespace energy::carbon
