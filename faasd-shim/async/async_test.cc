// async_test.cc — the durable queue end to end inside one runtime: enqueue, run, callback over
// real kernel sockets to a junction HTTP server on loopback; retries, giving up, restart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "faasd-shim/async/async_queue.h"
#include "faasd-shim/async/callback_client.h"
#include "faasd-shim/async/queue_db.h"
#include "junction/http/server/server.h"
#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::async {
namespace {

namespace sched = junction::sched;
using junction::http::Reply;
using junction::http::Request;

struct Received {
  std::string target, body;
  std::map<std::string, std::string> headers;  // lower-cased names
};

// A callback receiver: records every POST; answers fail_first 503s, then 200s.
struct Receiver {
  std::mutex mu;
  std::vector<Received> got;
  std::atomic<int> fail_first{0};
  std::atomic<int> seen{0};

  junction::http::Handler Handler() {
    return [this](const Request& req, Reply& reply) {
      Received r;
      r.target = std::string(req.target);
      r.body = std::string(req.body);
      for (const auto& h : req.headers) {
        std::string k(h.name);
        for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[k] = std::string(h.value);
      }
      const int n = seen.fetch_add(1);
      if (n < fail_first.load()) {
        reply.status = 503;
        return;
      }
      std::lock_guard lock(mu);
      got.push_back(std::move(r));
    };
  }
  std::size_t count() {
    std::lock_guard lock(mu);
    return got.size();
  }
};

// The invoke route a node gives the queue: here one that echoes what it was asked.
void EchoRoute(const Request& req, std::string_view rest, Reply& reply) {
  reply.status = rest.starts_with("missing") ? 404 : 200;
  reply.headers.emplace_back("Content-Type", "text/plain");
  reply.headers.emplace_back("X-Call-Id", "must-not-be-copied");
  std::string call_id(req.headers.Find("X-Call-Id").value_or("none"));
  reply.body = std::string(req.method_name) + " " + std::string(req.target) + " rest=" + std::string(rest) +
               " id=" + call_id + " body=" + std::string(req.body);
}

std::string TempDb(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/async-" + std::to_string(getpid()) + "-" + name;
  std::filesystem::remove_all(dir);
  return dir + "/async.db";
}

QueuedCall MakeCall(const std::string& id, const std::string& callback) {
  QueuedCall c;
  c.call_id = id;
  c.function = "echo.openfaas-fn";
  c.path = "/sub/path";
  c.query = "a=1";
  c.headers = {{"Content-Type", "text/plain"}, {"X-Custom", "v"}};
  c.body = "payload-" + id;
  c.callback_url = callback;
  c.enqueued_ns = 1;
  return c;
}

bool WaitFor(const std::function<bool()>& ok, std::chrono::milliseconds limit) {
  const auto end = sched::Clock::now() + limit;
  while (sched::Clock::now() < end) {
    if (ok()) return true;
    sched::SleepFor(std::chrono::milliseconds(10));
  }
  return ok();
}

TEST(CallbackUrl, ParsesWhatTheNodeCanReach) {
  auto a = ParseCallbackUrl("http://127.0.0.1:8123/cb?x=1");
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->endpoint.ToString(), "127.0.0.1:8123");
  EXPECT_EQ(a->host, "127.0.0.1:8123");
  EXPECT_EQ(a->target, "/cb?x=1");
  auto b = ParseCallbackUrl("http://localhost");
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->endpoint.ToString(), "127.0.0.1:80");
  EXPECT_EQ(b->target, "/");
  auto c = ParseCallbackUrl("HTTP://10.0.0.1:9?q");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->target, "/?q");
  for (const char* bad : {"https://127.0.0.1/", "ftp://x", "http://", "http://example.com/cb", "http://1.2.3.4:0/",
                          "http://1.2.3.4:99999/", "http://u:p@1.2.3.4/", "http://1.2.3.4/a b", "127.0.0.1:80"}) {
    auto r = ParseCallbackUrl(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.error().message().find("X-Callback-Url"), std::string::npos) << r.error().message();
    }
  }
}

TEST(QueueDb, RowsSurviveReopenUntilDone) {
  const std::string path = TempDb("db");
  {
    auto db = QueueDb::Open(path);
    ASSERT_TRUE(db) << db.error().message();
    QueuedCall a = MakeCall("a", ""), b = MakeCall("b", "http://127.0.0.1:1/");
    b.headers.push_back({"X-Obs", "z\x80y"});  // obs-text; header values never hold NUL
    b.body = std::string("\0\1\2", 3);
    std::vector<QueuedCall*> v{&a, &b};
    ASSERT_TRUE((*db)->Insert(v));
    EXPECT_LT(a.id, b.id);
    ASSERT_TRUE((*db)->MarkDone(a.id, "ran"));
    ASSERT_TRUE((*db)->SaveResult(b.id, {.status = 201, .headers = {{"K", "V"}}, .body = "out", .seconds = 0.5}));
    ASSERT_TRUE((*db)->SaveAttempts(b.id, 2));
  }
  auto db = QueueDb::Open(path);
  ASSERT_TRUE(db);
  auto pending = (*db)->LoadPending();
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);
  const QueuedCall& b = (*pending)[0];
  EXPECT_EQ(b.call_id, "b");
  EXPECT_EQ(b.body, std::string("\0\1\2", 3));
  ASSERT_EQ(b.headers.size(), 3u);
  EXPECT_EQ(b.headers[2].second, "z\x80y");
  EXPECT_EQ(b.attempts, 2);
  ASSERT_TRUE(b.result.has_value());
  EXPECT_EQ(b.result->status, 201);
  EXPECT_EQ(b.result->body, "out");
  EXPECT_EQ((*db)->CountPending().value_or(-1), 1);
  EXPECT_EQ((*(*db)->CountPending()), 1);
}

TEST(QueueDb, PruneKeepsTheNewestDoneRowsAndEveryPendingOne) {
  auto db = QueueDb::Open(TempDb("prune"));
  ASSERT_TRUE(db);
  std::vector<QueuedCall> calls(6, MakeCall("x", ""));
  std::vector<QueuedCall*> v;
  for (auto& c : calls) v.push_back(&c);
  ASSERT_TRUE((*db)->Insert(v));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*db)->MarkDone(calls[i].id, "ran"));
  ASSERT_TRUE((*db)->PruneDone(2));
  EXPECT_EQ((*db)->CountAll().value_or(-1), 3) << "two done rows and the pending one";
  EXPECT_EQ((*db)->CountPending().value_or(-1), 1);
}

TEST(QueueDb, OpenErrorsNameThePath) {
  auto db = QueueDb::Open("/proc/no-such-dir/async.db");
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message().find("/proc/no-such-dir"), std::string::npos) << db.error().message();
}

// Runs `body(stack, receiver url)` inside a runtime with a callback receiver listening.
void WithReceiver(Receiver& rx, const std::function<void(junction::net::Stack&, const std::string&)>& body) {
  sched::testing::RunOnCores(2, [&] {
    auto stack = junction::net::CreateStack("kernel");
    ASSERT_TRUE(stack) << stack.error().message();
    auto server = junction::http::Server::Start(**stack, *junction::net::Endpoint::Parse("127.0.0.1:0"), rx.Handler());
    ASSERT_TRUE(server) << server.error().message();
    const std::string url = "http://" + (*server)->local_endpoint().ToString() + "/cb";
    body(**stack, url);
    (*server)->Shutdown(std::chrono::seconds(1));
    server->reset();
    stack->reset();
  });
}

TEST(AsyncQueue, RunsEachCallAndPostsTheResultWithTheGatewayHeaders) {
  Receiver rx;
  const std::string path = TempDb("run");
  WithReceiver(rx, [&](junction::net::Stack& stack, const std::string& url) {
    AsyncOptions o;
    o.db_path = path;
    auto q = AsyncQueue::Open(o, EchoRoute, &stack);
    ASSERT_TRUE(q) << q.error().message();
    ASSERT_TRUE((*q)->Start());
    for (int i = 0; i < 5; ++i) {
      auto id = (*q)->Enqueue(MakeCall("call-" + std::to_string(i), url + "?n=" + std::to_string(i)));
      ASSERT_TRUE(id) << id.error().message();
    }
    QueuedCall none = MakeCall("no-callback", "");
    ASSERT_TRUE((*q)->Enqueue(std::move(none)));
    ASSERT_TRUE(WaitFor([&] { return rx.count() == 5 && (*q)->stats().completed == 6; }, std::chrono::seconds(10)));
    (*q)->Stop();
    EXPECT_EQ((*q)->stats().enqueued, 6u);
    EXPECT_EQ((*q)->stats().callbacks_ok, 5u);
  });
  ASSERT_EQ(rx.got.size(), 5u);
  std::map<std::string, Received> by_id;
  for (auto& r : rx.got) by_id[r.headers["x-call-id"]] = r;
  ASSERT_EQ(by_id.size(), 5u);
  const Received& r = by_id["call-3"];
  EXPECT_EQ(r.target, "/cb?n=3");
  EXPECT_EQ(r.body, "POST /function/echo.openfaas-fn/sub/path?a=1 rest=echo.openfaas-fn/sub/path id=call-3 "
                    "body=payload-call-3");
  EXPECT_EQ(r.headers.at("x-function-status"), "200");
  EXPECT_EQ(r.headers.at("x-function-name"), "echo.openfaas-fn");
  EXPECT_EQ(r.headers.at("content-type"), "text/plain");
  EXPECT_NE(r.headers.at("x-duration-seconds").find('.'), std::string::npos);
  // Every row is done: nothing runs again after a restart.
  auto db = QueueDb::Open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ((*db)->CountPending().value_or(-1), 0);
}

TEST(AsyncQueue, RetriesAFailingCallbackWithBackoff) {
  Receiver rx;
  rx.fail_first = 2;
  WithReceiver(rx, [&](junction::net::Stack& stack, const std::string& url) {
    AsyncOptions o;
    o.db_path = TempDb("retry");
    o.callback_base_delay = std::chrono::milliseconds(100);
    auto q = AsyncQueue::Open(o, EchoRoute, &stack);
    ASSERT_TRUE(q);
    ASSERT_TRUE((*q)->Start());
    const auto t0 = sched::Clock::now();
    ASSERT_TRUE((*q)->Enqueue(MakeCall("r", url)));
    ASSERT_TRUE(WaitFor([&] { return rx.count() == 1; }, std::chrono::seconds(10)));
    const double took = std::chrono::duration<double>(sched::Clock::now() - t0).count();
    EXPECT_GE(took, 0.3 * 0.95) << "100 ms, then 200 ms between the attempts";
    EXPECT_LT(took, 3.0);
    EXPECT_EQ((*q)->stats().callback_retries, 2u);
    (*q)->Stop();
  });
  EXPECT_EQ(rx.seen.load(), 3);
}

TEST(AsyncQueue, GivesUpAfterTheAttemptsAndMarksTheRowDone) {
  const std::string path = TempDb("giveup");
  sched::testing::RunOnCores(1, [&] {
    auto stack = junction::net::CreateStack("kernel");
    ASSERT_TRUE(stack);
    // A port nothing listens on: every attempt is refused.
    std::string url;
    {
      auto l = (*stack)->Listen(*junction::net::Endpoint::Parse("127.0.0.1:0"));
      ASSERT_TRUE(l);
      url = "http://" + l->local_endpoint().ToString() + "/";
    }
    AsyncOptions o;
    o.db_path = path;
    o.callback_attempts = 3;
    o.callback_base_delay = std::chrono::milliseconds(10);
    auto q = AsyncQueue::Open(o, EchoRoute, stack->get());
    ASSERT_TRUE(q);
    ASSERT_TRUE((*q)->Start());
    ASSERT_TRUE((*q)->Enqueue(MakeCall("g", url)));
    ASSERT_TRUE(WaitFor([&] { return (*q)->stats().completed == 1; }, std::chrono::seconds(10)));
    EXPECT_EQ((*q)->stats().callbacks_failed, 1u);
    EXPECT_EQ((*q)->stats().callback_retries, 2u);
    (*q)->Stop();
    q->reset();
    stack->reset();
  });
  auto db = QueueDb::Open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ((*db)->CountPending().value_or(-1), 0);
}

// Calls accepted but never run (the workers never started, as after a crash) run after the
// next Open.
TEST(AsyncQueue, AcceptedCallsRunAfterARestart) {
  Receiver rx;
  const std::string path = TempDb("restart");
  WithReceiver(rx, [&](junction::net::Stack& stack, const std::string& url) {
    {
      AsyncOptions o;
      o.db_path = path;
      auto q = AsyncQueue::Open(o, EchoRoute, &stack);
      ASSERT_TRUE(q);
      for (int i = 0; i < 3; ++i) ASSERT_TRUE((*q)->Enqueue(MakeCall("p" + std::to_string(i), url)));
      (*q)->Stop();  // no worker ever ran
    }
    EXPECT_EQ(rx.count(), 0u);
    AsyncOptions o;
    o.db_path = path;
    auto q = AsyncQueue::Open(o, EchoRoute, &stack);
    ASSERT_TRUE(q);
    EXPECT_EQ((*q)->stats().restored, 3u);
    ASSERT_TRUE((*q)->Start());
    ASSERT_TRUE(WaitFor([&] { return rx.count() == 3; }, std::chrono::seconds(10)));
    (*q)->Stop();
  });
}

TEST(AsyncQueue, BadOptionsAreRefused) {
  sched::testing::RunOnCores(1, [&] {
    auto stack = junction::net::CreateStack("kernel");
    ASSERT_TRUE(stack);
    AsyncOptions o;
    o.db_path = TempDb("opts");
    o.workers = 0;
    auto q = AsyncQueue::Open(o, EchoRoute, stack->get());
    ASSERT_FALSE(q);
    EXPECT_NE(q.error().message().find("async.workers"), std::string::npos);
    o.workers = 1;
    o.callback_attempts = 0;
    EXPECT_FALSE(AsyncQueue::Open(o, EchoRoute, stack->get()));
    stack->reset();
  });
}

}  // namespace
}  // namespace faasnode::async
