// async_metrics_e2e_test.cc — the real `faasnode serve` for /async-function and /metrics:
// a crash test (kill -9 with async calls queued, restart, every call completes and calls back
// to a listener this test runs on loopback), and a scrape by a real Prometheus (Debian's
// package, started here on loopback) read back through its HTTP API.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/callback_listener.h"
#include "tests/integration/e2e_util.h"

namespace {

using faasnode::e2e::CommandResult;
using faasnode::e2e::FreePort;
using faasnode::e2e::HaveCurl;
using faasnode::e2e::RunCommand;

// `faasnode serve` with a config of its own and a state dir that outlives restarts.
class Node {
 public:
  Node(const std::string& dir, const std::string& extra) : dir_(dir) {
    port_ = FreePort();
    config_ = dir + "/node.toml";
    std::ofstream(config_) << "[runtime]\ncores = [0]\n[net]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
                           << "[state]\ndir = \"" << dir << "/state\"\n"
                           << "[energy]\nledger = \"" << dir << "/ledger.db\"\n"
                           << extra;
    Start();
  }
  ~Node() { Kill(SIGTERM); }
  void Start() {
    log_ = dir_ + "/node-" + std::to_string(starts_++) + ".log";
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log_.c_str(), "w", stdout);
      (void)f;
      dup2(fileno(stdout), 2);
      execl(FAASNODE_BIN, FAASNODE_BIN, "serve", "--config", config_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 300; ++i) {  // up to 15 s
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      if (Curl("-o /dev/null -w '%{http_code}' " + Url("/healthz")).output == "200") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "faasnode did not come up; its log:\n" << Log();
  }
  void Kill(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  CommandResult Curl(const std::string& args) const { return RunCommand("curl -s --max-time 10 " + args); }
  std::string Log() const {
    std::ifstream f(log_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  int port() const { return port_; }

 private:
  std::string dir_, config_, log_;
  int port_ = 0;
  int starts_ = 0;
  pid_t pid_ = -1;
};

using Listener = faasnode::e2e::CallbackListener;

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/faasnode-" + name + "-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(AsyncEndToEnd, EveryAcceptedCallCompletesAfterKill9) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  const std::string dir = TempDir("async-crash");
  Listener listener;
  // One worker: eight 300 ms calls take 2.4 s, so the kill finds most of them queued.
  Node node(dir, "[async]\nworkers = 1\ncallback_base_delay_ms = 50\n");
  constexpr int kCalls = 8;
  std::set<std::string> ids;
  for (int i = 0; i < kCalls; ++i) {
    auto r = node.Curl("-D - -o /dev/null -X POST -d 'n" + std::to_string(i) + "' -H 'X-Callback-Url: " +
                       listener.Url() + "' '" + node.Url("/async-function/sleep?ms=300") + "'");
    ASSERT_NE(r.output.find("HTTP/1.1 202"), std::string::npos) << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("X-Call-Id: ([-0-9a-f]+)"))) << r.output;
    ids.insert(m[1]);
  }
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(kCalls));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  node.Kill(SIGKILL);
  const auto before = listener.Got();
  EXPECT_LT(before.size(), static_cast<std::size_t>(kCalls)) << "the kill came after every call had run";
  node.Start();  // the same state dir: the queue is still there
  for (int i = 0; i < 200 && listener.Got().size() < ids.size(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto got = listener.Got();
  for (const std::string& id : ids) {
    ASSERT_TRUE(got.contains(id)) << "no callback for " << id << "; node log:\n" << node.Log();
    const auto& h = got.at(id);
    EXPECT_EQ(h.at("x-function-status"), "200") << id;
    EXPECT_EQ(h.at("x-function-name"), "sleep") << id;
    EXPECT_NE(h.at("x-duration-seconds").find('.'), std::string::npos) << id;
  }
  EXPECT_NE(node.Log().find("not done before the last stop"), std::string::npos) << node.Log();
  // /system/logs is served behind basic auth like the other /system routes; /metrics is open.
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' '" + node.Url("/system/logs?name=sleep&follow=false") + "'").output,
            "401");
  std::ifstream pw(dir + "/state/basic-auth-password");
  const std::string password((std::istreambuf_iterator<char>(pw)), {});
  auto logs = node.Curl("-D - -u 'admin:" + password + "' '" + node.Url("/system/logs?name=sleep&follow=false") + "'");
  EXPECT_NE(logs.output.find("HTTP/1.1 200"), std::string::npos) << logs.output;
  EXPECT_NE(logs.output.find("application/x-ndjson"), std::string::npos) << logs.output;
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' " + node.Url("/metrics")).output, "200");
  std::printf("async crash test: %zu of %d calls had called back before kill -9; all %zu after restart (%d POSTs)\n",
              before.size(), kCalls, got.size(), listener.posts());
}

bool HavePrometheus() { return RunCommand("command -v prometheus").exit_code == 0; }

TEST(MetricsEndToEnd, PrometheusScrapesTheGatewaySeries) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  if (!HavePrometheus()) GTEST_SKIP() << "prometheus is not installed (scripts/setup.sh installs Debian's package)";
  const std::string dir = TempDir("prom");
  Node node(dir, "");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(node.Curl("-d x " + node.Url("/function/echo")).output, "x");
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' " + node.Url("/function/json-stats") + " -d bad").output, "400");
  const auto text = node.Curl(node.Url("/metrics")).output;
  ASSERT_NE(text.find("gateway_function_invocation_total{function_name=\"echo.openfaas-fn\",code=\"200\"} 3"),
            std::string::npos)
      << text;
  const int prom_port = FreePort();
  std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: faasnode\n"
                                         << "    static_configs:\n      - targets: ['127.0.0.1:" << node.port() << "']\n";
  const pid_t prom = fork();
  if (prom == 0) {
    FILE* f = std::freopen((dir + "/prometheus.log").c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), 2);
    const std::string cfg = "--config.file=" + dir + "/prometheus.yml";
    const std::string data = "--storage.tsdb.path=" + dir + "/prom-data";
    const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(prom_port);
    execlp("prometheus", "prometheus", cfg.c_str(), data.c_str(), listen.c_str(), nullptr);
    _exit(127);
  }
  const std::string api = "http://127.0.0.1:" + std::to_string(prom_port) + "/api/v1/query?query=";
  std::string answer, codes;
  for (int i = 0; i < 300; ++i) {  // up to 30 s: start-up, then a scrape every second
    answer = RunCommand("curl -s --max-time 2 '" + api +
                        "gateway_function_invocation_total%7Bfunction_name%3D%22echo.openfaas-fn%22%7D'")
                 .output;
    if (answer.find("\"value\":[") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  codes = RunCommand("curl -s --max-time 2 '" + api + "sum(gateway_function_invocation_total)%20by%20(code)'").output;
  const auto busy = RunCommand("curl -s --max-time 2 '" + api + "faasnode_core_busy_seconds_total'").output;
  kill(prom, SIGTERM);
  waitpid(prom, nullptr, 0);
  std::ifstream plog(dir + "/prometheus.log");
  const std::string prom_log((std::istreambuf_iterator<char>(plog)), {});
  EXPECT_NE(answer.find("\"status\":\"success\""), std::string::npos) << answer << "\n" << prom_log;
  EXPECT_NE(answer.find("\"code\":\"200\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"job\":\"faasnode\""), std::string::npos) << answer;
  EXPECT_NE(answer.find(",\"3\"]"), std::string::npos) << "three echo calls: " << answer;
  EXPECT_NE(codes.find("\"code\":\"400\""), std::string::npos) << codes;
  EXPECT_NE(busy.find("\"core\":\"0\""), std::string::npos) << busy;
}

}  // namespace
