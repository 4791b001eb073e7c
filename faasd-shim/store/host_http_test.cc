// host_http_test.cc — http_request (ABI v3) end to end through a native function: the fetch
// fixture calls the project's HTTP server on the loopback stack through the host's client and
// answers with what it got; its wait parks the uthread, not the (single) core; failures are
// results the function sees (bad URL, timeout, no client, a plain thread), not failed calls.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

#include "faasd-shim/store/function_store.h"
#include "faasd-shim/store/instance.h"
#include "junction/http/client/client.h"
#include "junction/http/server/server.h"
#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::store {
namespace {
using namespace std::chrono_literals;
using junction::sched::Clock;

std::shared_ptr<const NativeFunction> LoadFetch() {
  auto store = FunctionStore::Open(FAASNODE_STORE_TESTDATA_DIR);
  EXPECT_TRUE(store.has_value()) << store.error().message();
  auto fn = (*store)->Load("fetch");
  EXPECT_TRUE(fn.has_value()) << fn.error().message();
  return fn ? *fn : nullptr;
}

// The upstream: /slow answers after 200 ms; every answer echoes the method, body and X-Token.
void Upstream(const junction::http::Request& req, junction::http::Reply& resp) {
  if (req.path == "/slow") junction::sched::SleepFor(200ms);
  resp.headers.emplace_back("X-Seen", std::string(req.headers.Find("x-token").value_or("none")));
  resp.status = 203;
  resp.body = std::string(req.method_name) + ":" + std::string(req.body);
}

TEST(HostHttp, AFunctionCallsOutAndItsWaitParksOnlyItsUthread) {
  auto fn = LoadFetch();
  ASSERT_NE(fn, nullptr);
  junction::sched::testing::RunOnCores(1, [&] {
    auto stack = junction::net::CreateStack("loopback");
    ASSERT_TRUE(stack.has_value()) << stack.error().message();
    auto server = junction::http::Server::Start(**stack, *junction::net::Endpoint::Parse("127.0.0.1:0"), Upstream);
    ASSERT_TRUE(server.has_value()) << server.error().message();
    const std::string base = "http://" + (*server)->local_endpoint().ToString();
    {
      junction::http::Client client(stack->get());
      auto inst = Instance::Create(fn, {}, {.http = &client});
      ASSERT_TRUE(inst.has_value()) << inst.error().message();
      // Another uthread on the same single core keeps running while the function waits.
      std::atomic<bool> done{false};
      std::atomic<int> ticks{0};
      auto ticker = *junction::sched::Spawn([&] {
        while (!done.load()) {
          ticks.fetch_add(1);
          junction::sched::SleepFor(5ms);
        }
      });
      const Header token[] = {{"X-Token", "t-42"}};
      const std::string query = "url=" + base + "/slow";
      Response resp;
      const auto t0 = Clock::now();
      auto ok = inst->Invoke({.method = "POST", .query = query, .headers = token, .body = "ping"}, resp);
      const auto took = Clock::now() - t0;
      ASSERT_TRUE(ok.has_value()) << ok.error().message();
      EXPECT_EQ(resp.status, 200) << resp.body;
      EXPECT_EQ(resp.body, "203 t-42 POST:ping");
      EXPECT_GE(took, 190ms);
      EXPECT_GE(ticks.load(), 10) << "the core ran the other uthread during the 200 ms call";
      done = true;
      ticker.Join();

      // Failures come back to the function as results: it answers 502 with the host's words.
      ok = inst->Invoke({.query = "url=http://example.com/"}, resp);
      ASSERT_TRUE(ok.has_value()) << ok.error().message();
      EXPECT_EQ(resp.status, 502);
      EXPECT_EQ(resp.body.rfind(std::to_string(FAASNODE_ERR_INVALID) + " ", 0), 0u) << resp.body;
      EXPECT_NE(resp.body.find("no DNS resolver"), std::string::npos) << resp.body;
      ok = inst->Invoke({.query = "url=" + base + "/slow&timeout_ms=50"}, resp);
      ASSERT_TRUE(ok.has_value());
      EXPECT_EQ(resp.status, 502);
      EXPECT_EQ(resp.body.rfind(std::to_string(FAASNODE_ERR_TIMED_OUT) + " ", 0), 0u) << resp.body;
      // The invocation's deadline bounds the call too.
      ok = inst->Invoke({.query = "url=" + base + "/slow", .deadline = Clock::now() + 50ms}, resp);
      ASSERT_TRUE(ok.has_value());
      EXPECT_EQ(resp.body.rfind(std::to_string(FAASNODE_ERR_TIMED_OUT) + " ", 0), 0u) << resp.body;
      ok = inst->Invoke({.method = "BREW", .query = "url=" + base + "/"}, resp);
      ASSERT_TRUE(ok.has_value());
      EXPECT_NE(resp.body.find("method \"BREW\""), std::string::npos) << resp.body;
    }
    (*server)->Shutdown(1s);
    server->reset();
    stack->reset();
  });
}

TEST(HostHttp, WithoutAClientOrOnAPlainThreadTheCallIsUnavailable) {
  auto fn = LoadFetch();
  ASSERT_NE(fn, nullptr);
  auto inst = Instance::Create(fn, {}, {});
  ASSERT_TRUE(inst.has_value()) << inst.error().message();
  Response resp;
  ASSERT_TRUE(inst->Invoke({.query = "url=http://127.0.0.1:9/"}, resp).has_value());
  EXPECT_EQ(resp.status, 502);
  EXPECT_EQ(resp.body.rfind(std::to_string(FAASNODE_ERR_UNAVAILABLE) + " ", 0), 0u) << resp.body;
  EXPECT_NE(resp.body.find("lends no HTTP client"), std::string::npos) << resp.body;
}

}  // namespace
}  // namespace faasnode::store
