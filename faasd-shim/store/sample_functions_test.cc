// sample_functions_test.cc — every sample function, through the store and Instance, on uthreads.
//
// Each is loaded from the build's function store and invoked on the runtime as the node does,
// with its error cases.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "faasd-shim/store/function_store.h"
#include "faasd-shim/store/instance.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::store {
namespace {

using junction::sched::Clock;
using junction::sched::testing::RunOnCores;
using nlohmann::json;
using namespace std::chrono_literals;

class SampleFunctionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = FunctionStore::Open(FAASNODE_FUNCTIONS_DIR);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    store_ = std::move(*s);
  }

  Instance Make(std::string_view name, FunctionEnv env = {}) {
    auto fn = store_->Load(name);
    EXPECT_TRUE(fn.has_value()) << fn.error().message();
    auto inst = Instance::Create(*fn, std::move(env));
    EXPECT_TRUE(inst.has_value()) << inst.error().message();
    return std::move(*inst);
  }

  // Invokes on a uthread of a one-core runtime, as the node does.
  Response Call(const Instance& inst, const Request& req) {
    Response resp;
    RunOnCores(1, [&] {
      ASSERT_TRUE(junction::sched::InRuntime());
      auto s = inst.Invoke(req, resp);
      ASSERT_TRUE(s.has_value()) << s.error().message();
    });
    return resp;
  }

  static std::string HeaderOf(const Response& r, std::string_view name) {
    for (const auto& [k, v] : r.AllHeaders()) {
      if (k == name) return v;
    }
    return "<none>";
  }

  std::unique_ptr<FunctionStore> store_;
};

TEST_F(SampleFunctionsTest, TheStoreListsEverySample) {
  auto names = store_->List();
  ASSERT_TRUE(names.has_value()) << names.error().message();
  for (std::string_view want : {"cpu-burn", "echo", "hello", "json-stats", "sha256", "sleep"}) {
    EXPECT_NE(std::find(names->begin(), names->end(), want), names->end()) << want;
  }
}

TEST_F(SampleFunctionsTest, EchoReturnsTheBodyAndKeepsContentType) {
  Instance echo = Make("echo");
  const Header h[] = {{"content-type", "application/x-thing"}};
  Request req;
  req.method = "POST";
  req.headers = h;
  req.body = std::string_view("binary\0body\xff", 12);
  Response r = Call(echo, req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, req.body);
  EXPECT_EQ(HeaderOf(r, "Content-Type"), "application/x-thing");

  Response bare = Call(echo, {});
  EXPECT_EQ(bare.body, "");
  EXPECT_TRUE(bare.AllHeaders().empty());
}

TEST_F(SampleFunctionsTest, HelloGreetsTheNameParameter) {
  Instance hello = Make("hello");
  Request req;
  req.query = "x=1&name=Ada%20Lovelace&name=ignored";
  Response r = Call(hello, req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "Hello, Ada Lovelace!\n");
  EXPECT_EQ(HeaderOf(r, "Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(Call(hello, {}).body, "Hello, world!\n");

  FunctionEnv env;
  env.vars = {{"GREETING", "Howdy"}};
  Instance howdy = Make("hello", std::move(env));
  req.query = "name=Bob+Smith";
  EXPECT_EQ(Call(howdy, req).body, "Howdy, Bob Smith!\n");
}

TEST_F(SampleFunctionsTest, JsonStatsComputesAndRefusesBadInputWith400) {
  Instance stats = Make("json-stats");
  Request req;
  req.method = "POST";
  req.body = "[2, 4, 4, 4, 5, 5, 7, 9]";
  Response r = Call(stats, req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(HeaderOf(r, "Content-Type"), "application/json");
  json j = json::parse(r.body);
  EXPECT_EQ(j["count"], 8);
  EXPECT_EQ(j["min"], 2.0);
  EXPECT_EQ(j["max"], 9.0);
  EXPECT_EQ(j["mean"], 5.0);
  EXPECT_EQ(j["stddev"], 2.0);
  EXPECT_EQ(j["median"], 4.5);

  for (std::string_view bad : {"not json", "[1, 2", "{\"a\": [1]}", "[1, \"two\"]", ""}) {
    req.body = bad;
    Response e = Call(stats, req);
    EXPECT_EQ(e.status, 400) << bad;
    EXPECT_EQ(HeaderOf(e, "Content-Type"), "application/json");
    json err = json::parse(e.body);
    ASSERT_TRUE(err.contains("error")) << e.body;
    EXPECT_FALSE(err["error"].get<std::string>().empty());
  }
  req.body = "[1, \"two\"]";
  EXPECT_EQ(json::parse(Call(stats, req).body)["error"], "element 1 is a string, not a number");
}

TEST_F(SampleFunctionsTest, Sha256HexDigestOfTheBody) {
  Instance sha = Make("sha256");
  Request req;
  req.method = "POST";
  req.body = "abc";
  EXPECT_EQ(Call(sha, req).body,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
  req.body = "";
  EXPECT_EQ(Call(sha, req).body,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n");
  std::string million(1'000'000, 'a');
  req.body = million;
  EXPECT_EQ(Call(sha, req).body,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0\n");
}

TEST_F(SampleFunctionsTest, SleepWaitsAndRefusesBadMsWith400) {
  Instance sleep = Make("sleep");
  Request req;
  req.query = "ms=30";
  auto t0 = Clock::now();
  Response r = Call(sleep, req);
  auto took = Clock::now() - t0;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"slept_ms":30})");
  EXPECT_GE(took, 30ms);

  for (std::string_view q :
       {"ms=abc", "ms=60001", "ms=-1", "ms=1.5", "ms=", "", "ms=99999999999999999999"}) {
    req.query = q;
    Response e = Call(sleep, req);
    EXPECT_EQ(e.status, 400) << q;
    EXPECT_NE(e.body.find("ms must be an integer from 0 to 60000"), std::string::npos) << e.body;
  }
  req.query = "ms=60000";  // the bound itself is allowed: cut here by a deadline
  req.deadline = Clock::now() + 20ms;
  t0 = Clock::now();
  Response cut = Call(sleep, req);
  took = Clock::now() - t0;
  EXPECT_EQ(cut.status, 408);
  EXPECT_LT(took, 2s);
}

// Two 50 ms sleeps on one core overlap: the sleep parks the uthread, not the core.
TEST_F(SampleFunctionsTest, SleepDoesNotBlockTheCore) {
  Instance sleep = Make("sleep");
  Request req;
  req.query = "ms=50";
  Response a, b;
  Clock::duration took{};
  RunOnCores(1, [&] {
    auto t0 = Clock::now();
    auto ha = junction::sched::Spawn([&] { ASSERT_TRUE(sleep.Invoke(req, a).has_value()); });
    auto hb = junction::sched::Spawn([&] { ASSERT_TRUE(sleep.Invoke(req, b).has_value()); });
    ASSERT_TRUE(ha.has_value() && hb.has_value());
    ha->Join();
    hb->Join();
    took = Clock::now() - t0;
  });
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(b.status, 200);
  EXPECT_GE(took, 50ms);
  EXPECT_LT(took, 90ms) << "the two sleeps ran one after the other";
}

TEST_F(SampleFunctionsTest, CpuBurnReturnsTheKnownHashAndIsBounded) {
  Instance burn = Make("cpu-burn");
  Request req;
  req.query = "rounds=1000";
  Response r = Call(burn, req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"rounds":1000,"hash":"018ef286af4a4a0d"})");  // burn_test.cc, KnownStates
  EXPECT_EQ(Call(burn, {}).body, r.body);                             // 1000 rounds by default
  req.query = "rounds=1";
  EXPECT_EQ(Call(burn, req).body, R"({"rounds":1,"hash":"c8025c367c3730d8"})");
  for (std::string_view q : {"rounds=1000001", "rounds=x", "rounds=-5", "rounds="}) {
    req.query = q;
    EXPECT_EQ(Call(burn, req).status, 400) << q;
  }
}

// A long burn yields: a sleeper on the same core wakes close to its time, not after the burn.
TEST_F(SampleFunctionsTest, CpuBurnSharesItsCore) {
  Instance burn = Make("cpu-burn");
  Request req;
  req.query = "rounds=40000";  // ~100 ms of one core on these machines
  Response r;
  Clock::duration sleeper_took{}, burn_took{};
  RunOnCores(1, [&] {
    auto t0 = Clock::now();
    auto hb = junction::sched::Spawn([&] {
      ASSERT_TRUE(burn.Invoke(req, r).has_value());
      burn_took = Clock::now() - t0;
    });
    auto hs = junction::sched::Spawn([&] {
      junction::sched::SleepFor(5ms);
      sleeper_took = Clock::now() - t0;
    });
    ASSERT_TRUE(hb.has_value() && hs.has_value());
    hb->Join();
    hs->Join();
  });
  EXPECT_EQ(r.status, 200);
  EXPECT_LT(sleeper_took, burn_took) << "the sleeper waited for the whole burn";
}

}  // namespace
}  // namespace faasnode::store
