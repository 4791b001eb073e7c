// system_logs_test.cc — GET /system/logs through a real server and curl: NDJSON, chunked,
// tail/since/instance/namespace, follow streaming, and every listed error.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "faasd-shim/api/router.h"
#include "faasd-shim/api/serve_for_test.h"
#include "faasd-shim/api/system_logs.h"
#include "faasd-shim/logs/log_store.h"

namespace faasnode::api {
namespace {

using testing::Served;

std::int64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

class SystemLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
    const std::int64_t t = Now();
    store_.AppendAt(t - 3'600'000'000'000, "echo", "openfaas-fn", "11", "an hour ago");
    for (int i = 0; i < 4; ++i) store_.AppendAt(t - 1000 + i, "echo", "openfaas-fn", i % 2 ? "11" : "12", "line " + std::to_string(i));
    store_.AppendAt(t, "echo", "dev", "13", "in dev");
    served_ = std::make_unique<Served>([this](junction::net::Stack&) {
      const SystemLogsOptions fast{.poll = std::chrono::milliseconds(20), .keepalive = std::chrono::milliseconds(50)};
      router_.Exact("/system/logs", MakeSystemLogsHandler(&store_, fast));
      // The same handler, with a flag set when its stream returns (the connection is let go).
      router_.Exact("/watched-logs", [this, inner = MakeSystemLogsHandler(&store_, fast)](
                                         const Request& req, std::string_view rest, Reply& reply) {
        inner(req, rest, reply);
        if (!reply.stream) return;
        reply.stream = [this, s = std::move(reply.stream)](const std::function<bool(std::string_view)>& emit) {
          s(emit);
          stream_ended_ = true;
        };
      });
      return router_.Handler();
    });
    ASSERT_TRUE(served_->ok());
  }
  std::string Get(const std::string& query) { return served_->Curl("'" + served_->Url("/system/logs?" + query) + "'").output; }

  logs::LogStore store_;
  std::atomic<bool> stream_ended_{false};
  Router router_;
  std::unique_ptr<Served> served_;
};

TEST_F(SystemLogs, FollowFalseStreamsKeptLinesAsNdjsonAndEnds) {
  auto head = served_->Curl("-D - -o /dev/null '" + served_->Url("/system/logs?name=echo&follow=false") + "'");
  EXPECT_NE(head.output.find("HTTP/1.1 200"), std::string::npos) << head.output;
  EXPECT_NE(head.output.find("Content-Type: application/x-ndjson"), std::string::npos) << head.output;
  EXPECT_NE(head.output.find("Transfer-Encoding: chunked"), std::string::npos) << head.output;
  const std::string body = Get("name=echo&follow=false");
  // The default since (5 minutes) leaves the hour-old line out; four lines, oldest first.
  EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), 4) << body;
  EXPECT_EQ(body.find("an hour ago"), std::string::npos);
  EXPECT_EQ(body.find("{\"name\":\"echo\",\"namespace\":\"openfaas-fn\",\"instance\":\"12\",\"timestamp\":\""), 0u) << body;
  EXPECT_NE(body.find("\"text\":\"line 0\"}\n"), std::string::npos) << body;
  EXPECT_LT(body.find("line 0"), body.find("line 3"));
}

TEST_F(SystemLogs, TailSinceInstanceAndNamespace) {
  std::string b = Get("name=echo&tail=2");
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 2) << b;
  EXPECT_NE(b.find("line 3"), std::string::npos) << b;
  b = Get("name=echo&since=2000-01-01T00:00:00Z&tail=-1");
  EXPECT_NE(b.find("an hour ago"), std::string::npos) << b;
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 5) << b;
  b = Get("name=echo&since=2999-01-01T00:00:00%2B01:00");
  EXPECT_EQ(b, "");
  b = Get("name=echo&instance=11");
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 2) << b;
  b = Get("name=echo&namespace=dev");
  EXPECT_NE(b.find("\"namespace\":\"dev\""), std::string::npos) << b;
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 1) << b;
  EXPECT_EQ(Get("name=nope&follow=false"), "") << "an unknown function: an empty stream, as faasd";
  EXPECT_EQ(Get("name=echo&follow=maybe").empty(), false) << "a bad follow is false";
}

TEST_F(SystemLogs, UnparsableRequestsGet422AndOtherMethods405) {
  auto r = served_->Curl("-w ' %{http_code}' '" + served_->Url("/system/logs?name=echo&tail=ten") + "'");
  EXPECT_EQ(r.output.rfind("could not parse the log request", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("422"), std::string::npos) << r.output;
  r = served_->Curl("-w ' %{http_code}' '" + served_->Url("/system/logs?name=echo&since=yesterday") + "'");
  EXPECT_EQ(r.output.rfind("could not parse the log request", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("RFC 3339"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("422"), std::string::npos) << r.output;
  r = served_->Curl("-o /dev/null -w '%{http_code}' -X POST '" + served_->Url("/system/logs?name=echo") + "'");
  EXPECT_EQ(r.output, "405");
}

TEST_F(SystemLogs, FollowTrueStreamsNewLinesAsTheyCome) {
  auto follower = std::async(std::launch::async, [&] {
    return testing::RunCommand("curl -sN --max-time 1.5 '" + served_->Url("/system/logs?name=echo&tail=1&follow=true") + "'");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  store_.Append("echo", "openfaas-fn", "12", "after the follow began");
  store_.Append("other", "openfaas-fn", "12", "another function");
  const auto r = follower.get();
  EXPECT_EQ(r.exit_code, 28) << "curl ran until its --max-time: the stream stayed open";
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("line 2"), std::string::npos) << "tail=1" << r.output;
  EXPECT_NE(r.output.find("after the follow began"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("another function"), std::string::npos) << r.output;
}

// A follower that hangs up must not hold its connection (and a uthread) until the node stops:
// the keep-alive write notices it and the stream ends.
TEST_F(SystemLogs, FollowEndsSoonAfterTheClientLeaves) {
  const auto r = testing::RunCommand("curl -sN --max-time 0.5 '" + served_->Url("/watched-logs?name=echo&follow=true") + "'");
  EXPECT_EQ(r.exit_code, 28) << "curl left at its --max-time, the stream still open: " << r.output;
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
  const auto left = std::chrono::steady_clock::now();
  while (!stream_ended_.load() && std::chrono::steady_clock::now() - left < std::chrono::seconds(3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stream_ended_.load()) << "the follow was still running 3 s after its client left";
}

// While a follow is idle it writes keep-alive newlines; the Messages around them stay one per line.
TEST_F(SystemLogs, IdleFollowWritesKeepAliveNewlines) {
  const auto r = testing::RunCommand("curl -sN --max-time 0.4 '" + served_->Url("/system/logs?name=echo&tail=1&follow=true") + "'");
  EXPECT_EQ(r.output.rfind("{\"name\":\"echo\"", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("}\n\n"), std::string::npos) << "blank keep-alive lines after the Message: " << r.output;
  for (char c : r.output.substr(r.output.find("}\n") + 2)) EXPECT_EQ(c, '\n') << r.output;
}

}  // namespace
}  // namespace faasnode::api
