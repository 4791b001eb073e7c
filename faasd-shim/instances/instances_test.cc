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
    std::shared_ptr<FunctionPool> p = m.Find("echo");
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
    std::shared_ptr<FunctionPool> p = m.Find("sleep");
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
    std::shared_ptr<FunctionPool> p = m.Find("echo");
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
    EXPECT_FALSE(m.Deploy({.name = "y", .artifact = "echo", .ns = "../x"}).has_value());
    EXPECT_EQ(m.Find("missing"), nullptr);
    EXPECT_EQ(m.Names(), std::vector<std::string>{"echo"}) << "nothing refused was added";
  });
}

TEST(InstanceManager, DeploysReplacesAndRemovesWhileServingPerNamespace) {
  junction::sched::testing::RunOnCores(2, [] {
    auto st = Store();
    InstanceManager m(st.get());
    ASSERT_TRUE(m.Deploy({.name = "fn", .artifact = "echo"}).has_value());
    auto dev = m.Deploy({.name = "fn", .artifact = "hello", .ns = "dev"});
    ASSERT_TRUE(dev.has_value()) << dev.error().message();
    auto a = m.Find("fn");
    auto b = m.Find("fn", "dev");
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_EQ(m.Find("fn", "other"), nullptr);
    store::Response resp;
    ASSERT_EQ(a->Invoke({.method = "POST", .body = "x"}, resp).kind, InvokeOutcome::Kind::kServed);
    EXPECT_EQ(resp.body, "x");
    EXPECT_EQ(a->invocations(), 1u);
    auto dup = m.Deploy({.name = "fn", .artifact = "echo"});
    ASSERT_FALSE(dup.has_value());
    EXPECT_EQ(dup.error().code(), junction::ErrorCode::kAlreadyExists);
    // Replace: new calls reach the new pool; the old one still serves whoever holds it.
    ASSERT_TRUE(m.Replace({.name = "fn", .artifact = "hello"}).has_value());
    auto a2 = m.Find("fn");
    EXPECT_NE(a2, a);
    ASSERT_EQ(a->Invoke({.method = "POST", .body = "old"}, resp).kind, InvokeOutcome::Kind::kServed);
    EXPECT_EQ(resp.body, "old");
    ASSERT_EQ(a2->Invoke({.method = "GET", .query = "name=ada"}, resp).kind, InvokeOutcome::Kind::kServed);
    EXPECT_NE(resp.body.find("ada"), std::string::npos) << resp.body;
    auto missing = m.Replace({.name = "ghost", .artifact = "echo"});
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code(), junction::ErrorCode::kNotFound);
    // Remove: gone for Find, and for the other namespace nothing changed.
    ASSERT_TRUE(m.Remove("openfaas-fn", "fn").has_value());
    EXPECT_EQ(m.Find("fn"), nullptr);
    EXPECT_EQ(m.Find("fn", "dev"), b);
    EXPECT_EQ(m.Remove("openfaas-fn", "fn").error().code(), junction::ErrorCode::kNotFound);
    ASSERT_EQ(m.List().size(), 1u);
    EXPECT_EQ(m.List()[0].ns, "dev");
    // Changes made on one core are seen by Find on the other.
    junction::sched::JoinHandle h = *junction::sched::Spawn([&] {
      ASSERT_TRUE(m.Deploy({.name = "later", .artifact = "echo"}).has_value());
    });
    h.Join();
    EXPECT_NE(m.Find("later"), nullptr);
  });
}

TEST(FunctionPool, PrewarmStartsInstancesAndTheReaperKeepsTheFloor) {
  junction::sched::testing::RunOnCores(1, [] {
    auto st = Store();
    InstanceManager m(st.get());
    ASSERT_TRUE(m.Deploy({.name = "echo", .pool = {.replicas = 3, .idle_timeout = 10ms, .min_instances = 1}}).has_value());
    auto p = m.Find("echo");
    ASSERT_TRUE(p->Prewarm(5).has_value());
    EXPECT_EQ(p->stats().instances, 3) << "capped at replicas";
    EXPECT_EQ(p->ReapIdle(Clock::now() + 1s), 2);
    EXPECT_EQ(p->stats().instances, 1) << "com.openfaas.scale.min stays warm";
    p->set_floor(0);
    EXPECT_EQ(p->ReapIdle(Clock::now() + 1s), 1);
    EXPECT_EQ(p->stats().instances, 0);
    store::Response resp;
    EXPECT_TRUE(p->Invoke({.body = "z"}, resp).cold_start);
  });
}

// The cold-start series of /metrics: only the starts a call waited for, with their durations
// in the histogram (cumulative buckets, the last one holding every start).
TEST(FunctionPool, CallColdStartsAreCountedApartFromPrewarmWithTheirDurations) {
  junction::sched::testing::RunOnCores(1, [] {
    auto st = Store();
    InstanceManager m(st.get());
    ASSERT_TRUE(m.Deploy({.name = "echo", .pool = {.replicas = 2, .idle_timeout = 10ms}}).has_value());
    auto p = m.Find("echo");
    ASSERT_TRUE(p->Prewarm(1).has_value());
    store::Response resp;
    EXPECT_FALSE(p->Invoke({.body = "warm"}, resp).cold_start);
    EXPECT_EQ(p->stats().call_cold_starts.count, 0u) << "a prewarmed instance is no call's cold start";
    EXPECT_EQ(p->ReapIdle(Clock::now() + 1s), 1);
    std::chrono::nanoseconds waited{0};
    for (int i = 0; i < 2; ++i) {
      auto o = p->Invoke({.body = "cold"}, resp);
      ASSERT_TRUE(o.cold_start);
      waited += o.cold_start_time;
      EXPECT_EQ(p->ReapIdle(Clock::now() + 1s), 1);
    }
    const PoolStats s = p->stats();
    EXPECT_EQ(s.cold_starts, 3u) << "every instance started";
    EXPECT_EQ(s.call_cold_starts.count, 2u);
    EXPECT_EQ(s.call_cold_starts.ns_total, static_cast<std::uint64_t>(waited.count()));
    EXPECT_EQ(s.call_cold_starts.cumulative.back(), 2u) << "echo starts in well under 10 s";
    for (std::size_t i = 1; i < kColdStartBounds.size(); ++i) {
      EXPECT_LE(s.call_cold_starts.cumulative[i - 1], s.call_cold_starts.cumulative[i]);
    }
  });
}

}  // namespace
}  // namespace faasnode::instances
