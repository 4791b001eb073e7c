// instances_test.cc — cold start, warm reuse, in-flight limit (429), waiting on a cold start,
// and scale to zero, with the real echo and sleep functions.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "faasd-shim/instances/instance_manager.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::instances {
namespace {
using namespace std::chrono_literals;
using junction::sched::Clock;

std::unique_ptr<store::FunctionStore> Store() {
  auto s = store::FunctionStore::Open(FAASNODE_FUNCTIONS_DIR);
  EXPECT_TRUE(s.has_value()) << s.error().message();
  return std::move(*s);
}

TEST(FunctionPool, FirstCallColdStartsThenInstancesStayWarm) {
  junction::sched::testing::RunOnCores(2, [] {
    auto st = Store();
    InstanceManager m(st.get());
    ASSERT_TRUE(m.Deploy({.name = "echo", .artifact = "", .pool = {}}).has_value());
    m.Freeze();
    FunctionPool* p = m.Find("echo");
    ASSERT_NE(p, nullptr);
    store::Response resp;
    auto first = p->Invoke({.method = "POST", .body = "hi"}, resp);
    ASSERT_EQ(first.kind, InvokeOutcome::Kind::kServed) << first.error;
    EXPECT_TRUE(first.cold_start);
    EXPECT_GT(first.cold_start_time.count(), 0);
    EXPECT_EQ(resp.body, "hi");
    auto second = p->Invoke({.method = "POST", .body = "again"}, resp);
    EXPECT_FALSE(second.cold_start);
    EXPECT_EQ(resp.body, "again");
    EXPECT_EQ(p->stats().instances, 1);
    EXPECT_EQ(p->stats().cold_starts, 1u);
  });
}

TEST(FunctionPool, RequestsPastTheInFlightLimitGet429AndConcurrentColdStartsWait) {
  junction::sched::testing::RunOnCores(2, [] {
    auto st = Store();
    InstanceManager m(st.get());
    ASSERT_TRUE(m.Deploy({.name = "sleep", .pool = {.replicas = 1, .max_inflight = 2}}).has_value());
    m.Freeze();
    FunctionPool* p = m.Find("sleep");
    std::atomic<int> served{0}, overloaded{0};
    std::vector<junction::sched::JoinHandle> hs;
    for (int i = 0; i < 3; ++i) {
      hs.push_back(*junction::sched::Spawn([&] {
        store::Response resp;
        auto o = p->Invoke({.method = "GET", .query = "ms=100"}, resp);
        if (o.kind == InvokeOutcome::Kind::kServed) served++;
        if (o.kind == InvokeOutcome::Kind::kOverloaded) {
          overloaded++;
          EXPECT_NE(o.error.find("limit"), std::string::npos) << o.error;
        }
      }));
    }
    for (auto& h : hs) h.Join();
    EXPECT_EQ(served.load(), 2) << "two fit the limit (one of them waited for the cold start)";
    EXPECT_EQ(overloaded.load(), 1);
    EXPECT_EQ(p->stats().cold_starts, 1u);
    EXPECT_EQ(p->stats().rejected_429, 1u);
  });
}

TEST(FunctionPool, IdleInstancesScaleToZeroAndColdStartAgain) {
  junction::sched::testing::RunOnCores(1, [] {
    auto st = Store();
    InstanceManager m(st.get());
    ASSERT_TRUE(m.Deploy({.name = "echo", .pool = {.idle_timeout = 50ms}}).has_value());
    m.Freeze();
    FunctionPool* p = m.Find("echo");
    store::Response resp;
    EXPECT_TRUE(p->Invoke({.body = "x"}, resp).cold_start);
    EXPECT_EQ(p->ReapIdle(Clock::now()), 0) << "not idle long enough yet";
    EXPECT_EQ(p->ReapIdle(Clock::now() + 100ms), 1);
    EXPECT_EQ(p->stats().instances, 0);
    EXPECT_TRUE(p->Invoke({.body = "y"}, resp).cold_start) << "from zero, the next call cold-starts";
    // The reaper uthread does the same on its own.
    ASSERT_TRUE(m.StartReaper(20ms).has_value());
    junction::sched::SleepFor(150ms);
    EXPECT_EQ(p->stats().instances, 0);
    EXPECT_EQ(p->stats().scaled_down, 2u);
    m.StopReaper();
  });
}

TEST(InstanceManager, RefusesUnknownArtifactsDuplicatesAndBadNames) {
  junction::sched::testing::RunOnCores(1, [] {
    auto st = Store();
    InstanceManager m(st.get());
    auto missing = m.Deploy({.name = "nope", .artifact = "does-not-exist"});
    ASSERT_FALSE(missing.has_value());
    EXPECT_NE(missing.error().message().find("function nope"), std::string::npos) << missing.error().message();
    ASSERT_TRUE(m.Deploy({.name = "echo"}).has_value());
    EXPECT_FALSE(m.Deploy({.name = "echo"}).has_value());
    EXPECT_FALSE(m.Deploy({.name = "../etc"}).has_value());
    EXPECT_FALSE(m.Deploy({.name = "x", .artifact = "echo", .pool = {.replicas = 0}}).has_value());
    m.Freeze();
    EXPECT_FALSE(m.Deploy({.name = "hello"}).has_value());
    EXPECT_EQ(m.Find("missing"), nullptr);
  });
}

}  // namespace
}  // namespace faasnode::instances
