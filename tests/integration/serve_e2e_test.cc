// serve_e2e_test.cc — starts the real `faasnode serve` on the kernel backend and invokes every
// sample function with curl, as a user would; also bad configs (exit code 2) and draining.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>
#include <string>
#include <thread>

#include "tests/integration/e2e_util.h"

namespace {

using faasnode::e2e::CommandResult;
using faasnode::e2e::FreePort;
using faasnode::e2e::HaveCurl;
using faasnode::e2e::RunCommand;

class Node {
 public:
  explicit Node(const std::string& config_text, const std::string& energy_text = "") {
    port_ = FreePort();
    config_ = ::testing::TempDir() + "/e2e-" + std::to_string(port_) + ".toml";
    ledger_ = config_ + ".ledger.db";
    // A port used by an earlier run (or an earlier test of this run) left a state dir and a
    // ledger: tests that read the ledger must see only their own node's rows.
    std::filesystem::remove_all(config_ + ".state");
    for (const char* suffix : {"", "-wal", "-shm", "-journal", "-seq"}) std::filesystem::remove(ledger_ + suffix);
    std::ofstream(config_) << "[runtime]\ncores = [0]\n[net]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
                           << "[state]\ndir = \"" << config_ << ".state\"\n"  // a fresh state dir per node
                           << "[energy]\nledger = \"" << ledger_ << "\"\n" << energy_text << config_text;
    log_ = config_ + ".log";
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log_.c_str(), "w", stdout);
      (void)f;
      dup2(fileno(stdout), 2);
      execl(FAASNODE_BIN, FAASNODE_BIN, "serve", "--config", config_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200; ++i) {  // up to 10 s
      if (Curl("-o /dev/null -w '%{http_code}' " + Url("/healthz")).output == "200") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "faasnode did not come up; its log:\n" << Log();
  }
  ~Node() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  CommandResult Curl(const std::string& args) const { return RunCommand("curl -s --max-time 10 " + args); }
  std::string Log() const {
    std::ifstream f(log_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // Stops with SIGTERM and returns the exit code.
  int Stop() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  const std::string& ledger() const { return ledger_; }
  std::string state_dir() const { return config_ + ".state"; }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
  std::string config_, log_, ledger_;
};

TEST(ServeEndToEnd, EverySampleFunctionAnswersCurl) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("");
  EXPECT_EQ(node.Curl(node.Url("/healthz")).output, "OK");
  // The config's functions start cold: echo's first call starts its instance and says so.
  auto first = node.Curl("-si -d hello " + node.Url("/function/echo")).output;
  EXPECT_TRUE(first.ends_with("\r\n\r\nhello")) << first;
  EXPECT_NE(first.find("X-Cold-Start-Seconds: "), std::string::npos) << "echo's first call" << first;
  EXPECT_EQ(node.Curl("'" + node.Url("/function/hello?name=ada") + "'").output.find("ada") != std::string::npos, true);
  EXPECT_EQ(node.Curl("-d '[1,2,3,4]' " + node.Url("/function/json-stats")).output,
            R"({"count":4,"max":4.0,"mean":2.5,"median":2.5,"min":1.0,"stddev":1.118033988749895})");
  EXPECT_EQ(node.Curl("--data-binary abc " + node.Url("/function/sha256")).output,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
  auto sleep = node.Curl("-w ' %{http_code}' '" + node.Url("/function/sleep?ms=50") + "'");
  EXPECT_NE(sleep.output.find("200"), std::string::npos) << sleep.output;
  auto burn = node.Curl("-w ' %{http_code}' '" + node.Url("/function/cpu-burn?rounds=1000") + "'");
  EXPECT_NE(burn.output.find("\"hash\""), std::string::npos) << burn.output;
  // Errors: an unknown function, bad input to a function, a bad route.
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' " + node.Url("/function/nope")).output, "404");
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' -d nope " + node.Url("/function/json-stats")).output, "400");
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' " + node.Url("/nowhere")).output, "404");
  // Invocation headers, and a cold start reported once.
  auto headers = node.Curl("-D - -o /dev/null -d x " + node.Url("/function/echo.openfaas-fn"));
  EXPECT_NE(headers.output.find("X-Call-Id:"), std::string::npos) << headers.output;
  EXPECT_NE(headers.output.find("X-Duration-Seconds:"), std::string::npos);
  EXPECT_EQ(headers.output.find("X-Cold-Start-Seconds:"), std::string::npos) << "echo is warm since its first call";
  auto warm = node.Curl("-D - -o /dev/null " + node.Url("/function/hello"));
  EXPECT_EQ(warm.output.find("X-Cold-Start-Seconds:"), std::string::npos) << "hello's first call was above";
  EXPECT_EQ(node.Stop(), 0) << node.Log();
  EXPECT_NE(node.Log().find("draining"), std::string::npos);
}

TEST(ServeEndToEnd, SwigluMlpAnswersJsonAndBinaryOnTheCpu) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.swiglu-mlp]\nenv = { SWIGLU_MAX_TOKENS = \"2\" }\n");
  const std::string dir = ::testing::TempDir();
  // One token of 896 values (Qwen2.5-0.5B's hidden size), as JSON and as raw bf16 zeros.
  std::string row = "[";
  for (int i = 0; i < 896; ++i) row += (i ? "," : "") + std::to_string((i % 7 - 3) * 0.01);
  row += "]";
  std::ofstream(dir + "/swiglu.json") << R"({"model":"0.5b","tokens":[)" << row << "]}";
  std::ofstream(dir + "/swiglu-wide.json") << R"({"tokens":[)" << row.substr(0, row.size() - 1) << ",1]]}";
  std::ofstream(dir + "/swiglu-3.json") << R"({"tokens":[)" << row << "," << row << "," << row << "]}";
  std::ofstream(dir + "/swiglu.bf16", std::ios::binary) << std::string(2 * 896, '\0');
  const std::string url = node.Url("/function/swiglu-mlp");
  auto json = node.Curl("-D - -H 'Content-Type: application/json' --data-binary @" + dir + "/swiglu.json " + url);
  EXPECT_NE(json.output.find("HTTP/1.1 200"), std::string::npos) << json.output.substr(0, 400);
  EXPECT_NE(json.output.find(R"({"model":"0.5B","hidden":896,"intermediate":4864,"tokens":1,"path":"cpu-)"),
            std::string::npos) << json.output.substr(0, 600);
  EXPECT_NE(json.output.find("X-Swiglu-Path: cpu-"), std::string::npos);
  auto bin = node.Curl("-o " + dir + "/swiglu.out -w '%{http_code} %{size_download}' -H 'Content-Type: application/octet-stream' "
                       "--data-binary @" + dir + "/swiglu.bf16 '" + url + "?model=0.5b&dtype=bf16'");
  EXPECT_EQ(bin.output, "200 1792");  // SiLU(0)·0 = 0 through the whole block: Y is 896 zeros
  std::ifstream out(dir + "/swiglu.out", std::ios::binary);
  const std::string y((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_EQ(y, std::string(2 * 896, '\0'));
  // Bad input: 400 with a JSON message that says what was wrong.
  auto wide = node.Curl("-w ' %{http_code}' -H 'Content-Type: application/json' --data-binary @" + dir + "/swiglu-wide.json " + url);
  EXPECT_NE(wide.output.find("tokens[0] has 897 values; model 0.5B takes rows of hidden = 896"), std::string::npos) << wide.output;
  EXPECT_NE(wide.output.find(" 400"), std::string::npos);
  auto many = node.Curl("-w ' %{http_code}' -H 'Content-Type: application/json' --data-binary @" + dir + "/swiglu-3.json " + url);
  EXPECT_NE(many.output.find("at most 2 per call (SWIGLU_MAX_TOKENS)"), std::string::npos) << many.output;
  auto unknown = node.Curl("-w ' %{http_code}' -H 'Content-Type: application/octet-stream' --data-binary @" + dir +
                           "/swiglu.bf16 '" + url + "?model=9b'");
  EXPECT_NE(unknown.output.find("unknown Qwen-2.5 model size '9b'"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find(" 400"), std::string::npos);
  EXPECT_EQ(node.Stop(), 0) << node.Log();
}

// SDK v2 report_energy end to end: the store's probe fixture reports 1.25 + 0.5 J of GPU
// energy (NVML); the ledger row of that call carries gpu_j = 1.75 and source nvml beside the
// CPU share, while a call that reports nothing has no gpu figure at all (NULL, not 0).
TEST(ServeEndToEnd, EnergyAFunctionMeasuredReachesItsLedgerRow) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  if (RunCommand("command -v sqlite3").exit_code != 0) GTEST_SKIP() << "sqlite3 CLI missing (scripts/setup.sh installs it)";
  Node node(std::string("[functions]\nstore = \"") + FAASNODE_STORE_TESTDATA_DIR + "\"\n[functions.probe]\n");
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' -H 'X-Call-Id: gpu-call' '" + node.Url("/function/probe?do=energy") + "'").output, "203");
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' -H 'X-Call-Id: cpu-call' '" + node.Url("/function/probe") + "'").output, "203");
  ASSERT_EQ(node.Stop(), 0) << node.Log();
  auto rows = RunCommand("sqlite3 -separator ' ' " + node.ledger() +
                         " \"SELECT call_id, ifnull(gpu_j, 'null'), source, grams > 0 FROM invocations ORDER BY call_id\"");
  ASSERT_EQ(rows.exit_code, 0) << rows.output;
  std::istringstream lines(rows.output);
  std::string cpu_id, cpu_gpu, cpu_src, gpu_id, gpu_gpu, gpu_src;
  int cpu_grams = 0, gpu_grams = 0;
  lines >> cpu_id >> cpu_gpu >> cpu_src >> cpu_grams >> gpu_id >> gpu_gpu >> gpu_src >> gpu_grams;
  EXPECT_EQ(cpu_id, "cpu-call") << rows.output;
  EXPECT_EQ(cpu_gpu, "null") << rows.output;
  EXPECT_EQ(cpu_src.find("nvml"), std::string::npos) << rows.output;
  EXPECT_EQ(gpu_id, "gpu-call") << rows.output;
  EXPECT_EQ(gpu_gpu, "1.75") << rows.output;
  EXPECT_NE(gpu_src.find("nvml"), std::string::npos) << rows.output;
  EXPECT_EQ(gpu_grams, 1) << "the GPU joules are priced: " << rows.output;
}

// SDK v3 http_request end to end: the store's fetch fixture calls the node's own /healthz
// through the node's HTTP client. The node has one core, so the answer can only come while
// the calling function's uthread is parked: the wait does not hold the core.
TEST(ServeEndToEnd, AFunctionCallsOutThroughTheNodesHttpClient) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node(std::string("[functions]\nstore = \"") + FAASNODE_STORE_TESTDATA_DIR + "\"\n[functions.fetch]\n");
  const std::string self = node.Url("/healthz");
  auto ok = node.Curl("-w ' %{http_code}' '" + node.Url("/function/fetch?url=" + self) + "'");
  EXPECT_EQ(ok.output, "200 - OK 200") << ok.output;
  auto dns = node.Curl("-w ' %{http_code}' '" + node.Url("/function/fetch?url=http://example.com/") + "'");
  EXPECT_NE(dns.output.find("no DNS resolver"), std::string::npos) << dns.output;
  EXPECT_TRUE(dns.output.ends_with(" 502")) << dns.output;
  EXPECT_EQ(node.Stop(), 0) << node.Log();
}

TEST(ServeEndToEnd, ExecSamplesAnswerCurl) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("");  // the embedded defaults: cat, wc (wc -l) and sha512sum beside the native ones
  EXPECT_EQ(node.Curl("--data-binary 'hello exec' " + node.Url("/function/cat")).output, "hello exec");
  EXPECT_EQ(RunCommand("printf 'a\\nb\\nc\\n' | curl -s --max-time 10 --data-binary @- " + node.Url("/function/wc")).output,
            "3\n");
  EXPECT_EQ(node.Curl("--data-binary abc " + node.Url("/function/sha512sum")).output,
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd4"
            "54d4423643ce80e2a9ac94fa54ca49f  -\n");
  auto headers = node.Curl("-D - -o /dev/null -d x " + node.Url("/function/cat"));
  EXPECT_NE(headers.output.find("HTTP/1.1 200"), std::string::npos) << headers.output;
  EXPECT_NE(headers.output.find("X-Duration-Seconds:"), std::string::npos) << headers.output;
  EXPECT_EQ(node.Stop(), 0) << node.Log();
}

TEST(ServeEndToEnd, ExecFailuresTimeoutsAndTheChildsUser) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.fail]\nfprocess = \"cat /no/such/file\"\n"
            "[functions.slow]\nfprocess = \"sleep 5\"\nexec_timeout_ms = 200\n"
            "[functions.whoami]\nfprocess = \"id -un\"\n"
            "[functions.env]\nfprocess = \"env\"\nenv = { GREETING = \"hi\" }\n");
  auto fail = node.Curl("-w ' %{http_code}' " + node.Url("/function/fail"));
  EXPECT_NE(fail.output.find("exited with exit status 1"), std::string::npos) << fail.output;
  EXPECT_NE(fail.output.find("No such file or directory"), std::string::npos) << fail.output;
  EXPECT_TRUE(fail.output.ends_with(" 500")) << fail.output;
  const auto t0 = std::chrono::steady_clock::now();
  auto slow = node.Curl("-w ' %{http_code}' " + node.Url("/function/slow"));
  EXPECT_TRUE(slow.output.ends_with(" 408")) << slow.output;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  auto env = node.Curl("-H 'X-Foo: bar' '" + node.Url("/function/env/sub?q=1") + "'");
  EXPECT_NE(env.output.find("Http_X_Foo=bar\n"), std::string::npos) << env.output;
  EXPECT_NE(env.output.find("Http_Path=/sub\n"), std::string::npos) << env.output;
  EXPECT_NE(env.output.find("Http_Query=q=1\n"), std::string::npos) << env.output;
  EXPECT_NE(env.output.find("Http_Method=GET\n"), std::string::npos) << env.output;
  EXPECT_NE(env.output.find("GREETING=hi\n"), std::string::npos) << env.output;
  if (geteuid() == 0) {
    EXPECT_EQ(node.Curl(node.Url("/function/whoami")).output, "nobody\n");
  }
  EXPECT_EQ(node.Stop(), 0) << node.Log();
}

TEST(ServeEndToEnd, InFlightLimitGives429) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.sleep]\nmax_inflight = 1\n");
  // Two concurrent 300 ms sleeps on one instance with a limit of one: one gets 429.
  auto both = RunCommand("(curl -s -o /dev/null -w '%{http_code}\\n' --max-time 10 '" + node.Url("/function/sleep?ms=300") +
                         "' & curl -s -o /dev/null -w '%{http_code}\\n' --max-time 10 '" +
                         node.Url("/function/sleep?ms=300") + "'; wait) | sort");
  EXPECT_EQ(both.output, "200\n429\n") << both.output;
}

// The value of response header `name` in a `curl -si` output, or "" when absent.
std::string HeaderValue(const std::string& response, const std::string& name) {
  const std::size_t at = response.find("\n" + name + ": ");
  if (at == std::string::npos) return "";
  const std::size_t begin = at + name.size() + 3;
  return response.substr(begin, response.find('\r', begin) - begin);
}

// The value of the sample `series` (name and labels, as /metrics writes them), or -1.
double MetricValue(const std::string& metrics, const std::string& series) {
  const std::size_t at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::atof(metrics.c_str() + at + series.size() + 2);
}

// The config's functions: nothing runs until the first call, which cold-starts an instance
// (X-Cold-Start-Seconds, and faasnode_cold_starts_total / faasnode_cold_start_seconds);
// after idle_timeout_ms the reaper scales to zero and the next call is cold again; min_warm
// keeps instances started with the node and never cold for a call.
TEST(ServeEndToEnd, ConfigFunctionsStartColdScaleToZeroAndCountColdStarts) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.echo]\nidle_timeout_ms = 200\n[functions.hello]\nmin_warm = 1\n");
  const std::string echo = "{function_name=\"echo.openfaas-fn\"}";
  const std::string hello = "{function_name=\"hello.openfaas-fn\"}";
  std::string m = node.Curl(node.Url("/metrics")).output;
  EXPECT_EQ(MetricValue(m, "gateway_service_count" + echo), 0) << "echo has no instance before its first call\n" << m;
  EXPECT_EQ(MetricValue(m, "gateway_service_count" + hello), 1) << "min_warm = 1\n" << m;
  EXPECT_EQ(MetricValue(m, "faasnode_cold_starts_total" + echo), 0) << m;

  auto cold = node.Curl("-si -d a " + node.Url("/function/echo")).output;
  EXPECT_GT(std::atof(HeaderValue(cold, "X-Cold-Start-Seconds").c_str()), 0.0) << cold;
  auto warm = node.Curl("-si -d b " + node.Url("/function/echo")).output;
  EXPECT_NE(warm.find("HTTP/1.1 200"), std::string::npos) << warm;
  EXPECT_EQ(HeaderValue(warm, "X-Cold-Start-Seconds"), "") << warm;
  auto kept = node.Curl("-si " + node.Url("/function/hello")).output;
  EXPECT_NE(kept.find("HTTP/1.1 200"), std::string::npos) << kept;
  EXPECT_EQ(HeaderValue(kept, "X-Cold-Start-Seconds"), "") << "hello was started with the node\n" << kept;

  // The reaper runs every second: echo, idle for 200 ms, goes back to zero instances.
  for (int i = 0; i < 60; ++i) {
    m = node.Curl(node.Url("/metrics")).output;
    if (MetricValue(m, "gateway_service_count" + echo) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(MetricValue(m, "gateway_service_count" + echo), 0) << "echo did not scale to zero\n" << m;
  EXPECT_EQ(MetricValue(m, "gateway_service_count" + hello), 1) << "min_warm stays warm\n" << m;
  auto again = node.Curl("-si -d c " + node.Url("/function/echo")).output;
  EXPECT_GT(std::atof(HeaderValue(again, "X-Cold-Start-Seconds").c_str()), 0.0) << "from zero\n" << again;

  m = node.Curl(node.Url("/metrics")).output;
  EXPECT_EQ(MetricValue(m, "faasnode_cold_starts_total" + echo), 2) << m;
  EXPECT_EQ(MetricValue(m, "faasnode_cold_starts_total" + hello), 0) << m;
  EXPECT_EQ(MetricValue(m, "faasnode_cold_start_seconds_count" + echo), 2) << m;
  EXPECT_GT(MetricValue(m, "faasnode_cold_start_seconds_sum" + echo), 0) << m;
  EXPECT_EQ(MetricValue(m, "faasnode_cold_start_seconds_bucket{function_name=\"echo.openfaas-fn\",le=\"+Inf\"}"), 2)
      << m;
  EXPECT_EQ(node.Stop(), 0) << node.Log();
}

// Every invocation is billed: the carbon report's functions, idle and overhead add up to the
// meter's joules and grams for the run, each labelled with its source (the power model on
// these VMs); every response carries the estimate at completion; the HTML page renders.
TEST(ServeEndToEnd, CarbonReportAddsUpToTheMeter) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.echo]\n[functions.cpu-burn]\n", "interval_ms = 5\n");
  std::string echo_reply, burn_reply;
  for (int i = 0; i < 10; ++i) {
    burn_reply = node.Curl("-si '" + node.Url("/function/cpu-burn?rounds=20000") + "'").output;
    echo_reply = node.Curl("-si -d hi " + node.Url("/function/echo")).output;
  }
  for (const std::string* r : {&echo_reply, &burn_reply}) {
    EXPECT_EQ(HeaderValue(*r, "X-Energy-Source"), "model") << *r;
    EXPECT_GT(std::atof(HeaderValue(*r, "X-Energy-Joules").c_str()), 0.0) << *r;
    EXPECT_GT(std::atof(HeaderValue(*r, "X-Carbon-Grams").c_str()), 0.0) << *r;
    const std::string how = HeaderValue(*r, "X-Energy-Estimate");
    EXPECT_TRUE(how == "on-cpu" || how == "upper-bound") << *r;
  }
  ASSERT_EQ(node.Stop(), 0) << node.Log();
  auto report = RunCommand(std::string(FAASNODE_BIN) + " carbon report --format csv --ledger " + node.ledger());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  double functions = 0, node_share = 0, meter = 0, functions_g = 0, node_g = 0, meter_g = 0;
  int burn_calls = 0;
  std::istringstream lines(report.output);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
    ASSERT_GE(f.size(), 5u) << line;
    EXPECT_EQ(f[1], "model") << "every figure says where it came from: " << line;
    ASSERT_FALSE(f[4].empty()) << "every row is priced, the node's too: " << line;
    const double joules = std::stod(f[3]);
    const double grams = std::stod(f[4]);
    if (f[0] == "= meter (intervals)") {
      meter = joules;
      meter_g = grams;
    } else if (f[0][0] == '(') {
      node_share += joules;
      node_g += grams;
    } else {
      functions += joules;
      functions_g += grams;
      if (f[0] == "cpu-burn") burn_calls = std::stoi(f[2]);
    }
  }
  EXPECT_EQ(burn_calls, 10) << report.output;
  EXPECT_GT(functions, 0.0) << report.output;
  EXPECT_GT(meter, 0.0) << report.output;
  EXPECT_NEAR(functions + node_share, meter, meter * 1e-6) << report.output;
  EXPECT_NEAR(functions_g + node_g, meter_g, meter_g * 1e-6) << report.output;
  auto html = RunCommand(std::string(FAASNODE_BIN) + " carbon report --format html --ledger " + node.ledger());
  ASSERT_EQ(html.exit_code, 0) << html.output;
  EXPECT_EQ(html.output.rfind("<!DOCTYPE html>", 0), 0u) << html.output.substr(0, 200);
  EXPECT_NE(html.output.find("cpu-burn"), std::string::npos);
  EXPECT_NE(html.output.find("<polyline"), std::string::npos) << "the intensity curve";
}

TEST(ServeEndToEnd, EnergyHeadersCanBeSwitchedOff) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.echo]\n", "response_headers = false\n");
  const std::string r = node.Curl("-si -d hi " + node.Url("/function/echo")).output;
  EXPECT_NE(HeaderValue(r, "X-Call-Id"), "") << r;
  EXPECT_EQ(HeaderValue(r, "X-Energy-Joules"), "") << r;
  EXPECT_EQ(HeaderValue(r, "X-Carbon-Grams"), "") << r;
}

// GET /system/carbon serves the report's JSON behind the node's basic auth.
TEST(ServeEndToEnd, SystemCarbonNeedsAuthAndAnswersTheReport) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node("[functions.echo]\n", "interval_ms = 5\n");
  node.Curl("-o /dev/null -d hi " + node.Url("/function/echo"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a few intervals: its row lands
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' " + node.Url("/system/carbon")).output, "401");
  std::ifstream pw(node.state_dir() + "/basic-auth-password");
  std::string password;
  std::getline(pw, password);
  ASSERT_FALSE(password.empty());
  const std::string body = node.Curl("-u admin:" + password + " " + node.Url("/system/carbon")).output;
  EXPECT_NE(body.find("\"group_by\":\"function\""), std::string::npos) << body;
  EXPECT_NE(body.find("\"function\":\"echo\",\"kind\":\"function\",\"source\":\"model\""), std::string::npos)
      << body;
  EXPECT_NE(body.find("\"kind\":\"meter\""), std::string::npos) << body;
  // The same bill as Prometheus series (no auth on /metrics, as faasd's provider).
  const std::string metrics = node.Curl(node.Url("/metrics")).output;
  EXPECT_NE(metrics.find("faasnode_energy_joules_total{function=\"echo\",zone=\"package\",source=\"model\"} "),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("faasnode_carbon_grams_total{function=\"echo\"} "), std::string::npos) << metrics;
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' -u admin:" + password + " '" +
                      node.Url("/system/carbon?group_by=day") + "'").output,
            "400");
}

// The other commands: `version`, and --help on every command (exit 0, what it does and its
// options); a command group without its subcommand is bad input (exit 2, one line).
TEST(ServeEndToEnd, VersionAndHelpOnEveryCommand) {
  const std::string bin = FAASNODE_BIN;
  auto version = RunCommand(bin + " version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_TRUE(version.output.starts_with("faasnode ")) << version.output;
  EXPECT_TRUE(version.output.ends_with("\n")) << version.output;
  EXPECT_EQ(std::count(version.output.begin(), version.output.end(), '\n'), 1) << version.output;
  struct Help {
    const char* args;
    const char* says;
  };
  for (const Help& h : {Help{"--help", "SUBCOMMAND"}, Help{"version --help", "print the version"},
                        Help{"serve --help", "--config"}, Help{"carbon --help", "report"},
                        Help{"carbon report --help", "--ledger"}}) {
    auto r = RunCommand(bin + " " + h.args);
    EXPECT_EQ(r.exit_code, 0) << h.args << ": " << r.output;
    EXPECT_NE(r.output.find("Usage:"), std::string::npos) << h.args << ": " << r.output;
    EXPECT_NE(r.output.find(h.says), std::string::npos) << h.args << ": " << r.output;
  }
  auto bare = RunCommand(bin + " carbon");
  EXPECT_EQ(bare.exit_code, 2) << bare.output;
  EXPECT_EQ(std::count(bare.output.begin(), bare.output.end(), '\n'), 1) << bare.output;
  EXPECT_EQ(RunCommand(bin + " version --bogus").exit_code, 2);
}

TEST(ServeEndToEnd, BadConfigsExitWithCode2AndOneLine) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/bad1.toml") << "[runtime]\ncores = [4095]\n";
  std::ofstream(dir + "/bad2.toml") << "[runtime]\nstack_size_kib = 4\n";
  std::ofstream(dir + "/bad3.toml") << "[runtime]\nturbo = true\n";
  // A fresh state dir: the config's functions are deployed on the first start with it only.
  std::filesystem::remove_all(dir + "/bad4.state");
  std::ofstream(dir + "/bad4.toml") << "[state]\ndir = \"" << dir << "/bad4.state\"\n"
                                    << "[functions.x]\nartifact = \"missing\"\n";
  for (const char* name : {"bad1", "bad2", "bad3", "bad4"}) {
    auto r = RunCommand(std::string(FAASNODE_BIN) + " serve --config " + dir + "/" + name + ".toml");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    int lines = 0;
    for (char c : r.output) lines += c == '\n';
    EXPECT_EQ(lines, 1) << name << ": " << r.output;
  }
  auto unknown = RunCommand(std::string(FAASNODE_BIN) + " frobnicate");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_EQ(RunCommand(std::string(FAASNODE_BIN) + " serve --help").exit_code, 0);
}

}  // namespace
