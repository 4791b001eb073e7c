// system_carbon_test.cc — GET /system/carbon answers the report's JSON from a real ledger;
// bad parameters, methods and a node without a ledger get their deliberate statuses.
#include "faasd-shim/api/system_carbon.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "energy/ledger/ledger.h"
#include "faasd-shim/billing/carbon_query.h"

namespace faasnode::api {
namespace {

class SystemCarbonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test and process: ctest runs this fixture's tests in parallel.
    const std::string dir = ::testing::TempDir() + "/system_carbon-" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                            std::to_string(getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path_ = dir + "/ledger.db";
    auto l = energy::Ledger::Open({.path = path_});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    for (const char* fn : {"echo", "echo", "sha256"}) {
      energy::InvocationRecord r;
      r.function.Assign(fn);
      r.start_ns = 1'796'000'000'000'000'000LL;
      r.end_ns = r.start_ns + 1000;
      r.joules.Set(energy::Zone::kPackage, energy::Joules{0.5});
      r.joules.sources.Add(energy::Source::kModel);
      r.grams = 5e-5;
      ASSERT_TRUE((*l)->Push(0, r).has_value());
    }
    energy::IntervalRecord iv;
    iv.begin_ns = 1'796'000'000'000'000'000LL;
    iv.end_ns = iv.begin_ns + 10'000'000;
    iv.meter.Set(energy::Zone::kPackage, energy::Joules{2.0});
    iv.meter.sources.Add(energy::Source::kModel);
    iv.invocations_j = 1.5;
    iv.idle_j = 0.5;
    iv.Price(360.0);
    ASSERT_TRUE((*l)->PushInterval(iv).has_value());
    ASSERT_TRUE((*l)->Close().has_value());
  }
  Reply Get(const std::string& ledger, std::string_view query, std::string_view method = "GET") {
    Request req;
    req.method_name = method;
    req.path = "/system/carbon";
    req.query = query;
    Reply reply;
    MakeSystemCarbonHandler(ledger)(req, {}, reply);
    return reply;
  }
  std::string path_;
};

TEST_F(SystemCarbonTest, AnswersTheReportsJson) {
  Reply r = Get(path_, "");
  ASSERT_EQ(r.status, 200) << r.body;
  auto q = billing::QueryCarbon(path_, {});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(r.body, billing::CarbonReportJson(*q) + "\n") << "the same document as the CLI's --format json";
  EXPECT_NE(r.body.find("\"function\":\"echo\",\"kind\":\"function\",\"source\":\"model\",\"calls\":2"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("\"g_per_kwh\":360"), std::string::npos) << r.body;
  Reply only = Get(path_, "function=sha%32" "56&group_by=hour&since=2026-01-01T00:00:00Z");
  ASSERT_EQ(only.status, 200) << only.body;
  EXPECT_NE(only.body.find("\"group_by\":\"hour\""), std::string::npos) << only.body;
  EXPECT_NE(only.body.find("\"calls\":1"), std::string::npos) << only.body;
  EXPECT_EQ(Get(path_, "", "HEAD").status, 200);
}

TEST_F(SystemCarbonTest, BadRequestsGetDeliberateStatuses) {
  EXPECT_EQ(Get(path_, "group_by=day").status, 400);
  EXPECT_EQ(Get(path_, "since=yesterday").status, 400);
  Reply unknown = Get(path_, "fn=echo");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(unknown.body.find("known: function, since, until"), std::string::npos) << unknown.body;
  EXPECT_EQ(Get(path_, "function=%zz").status, 400);
  Reply post = Get(path_, "", "POST");
  EXPECT_EQ(post.status, 405);
  Reply off = Get("", "");
  EXPECT_EQ(off.status, 404);
  EXPECT_NE(off.body.find("[energy] enabled = true"), std::string::npos) << off.body;
  EXPECT_EQ(Get(path_ + ".missing", "").status, 404);
}

}  // namespace
}  // namespace faasnode::api
