// dpdk_serve_e2e_test.cc — starts the real `faasnode serve` on the dpdk backend (net_tap,
// the node's own TCP/IP stack) inside a network namespace this test creates, and invokes every
// sample function, native and exec, with curl from inside that namespace. The tap exists only
// in the namespace; the namespace and the node (by pid) are removed when the test ends.
// Needs root (netns, tap); skips with the reason otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "tests/integration/e2e_util.h"

namespace {

using faasnode::e2e::CommandResult;
using faasnode::e2e::RunCommand;

constexpr const char* kNsPrefix = "fn-e2e-dpdk-";

// Namespaces an earlier run of this test left behind (its process is gone): removed.
void RemoveStaleNamespaces() {
  auto list = RunCommand("ip netns list | awk '{print $1}'");
  std::size_t at = 0;
  while (at < list.output.size()) {
    const std::size_t end = list.output.find('\n', at);
    const std::string name = list.output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? list.output.size() : end + 1;
    if (!name.starts_with(kNsPrefix)) continue;
    const pid_t owner = static_cast<pid_t>(std::atoi(name.c_str() + std::char_traits<char>::length(kNsPrefix)));
    if (owner > 0 && kill(owner, 0) == 0) continue;  // a live run's
    RunCommand("for p in $(ip netns pids " + name + "); do kill -9 $p; done; ip netns del " + name);
  }
}

// A dpdk node on net_tap in a fresh namespace; curl runs inside the namespace.
class DpdkNode {
 public:
  DpdkNode() {
    RemoveStaleNamespaces();
    ns_ = kNsPrefix + std::to_string(getpid());
    tap_ = "fne2e" + std::to_string(getpid() % 1000000);  // IFNAMSIZ: at most 15 characters
    RunCommand("ip netns del " + ns_);
    if (auto r = RunCommand("ip netns add " + ns_ + " && ip -n " + ns_ + " link set lo up"); r.exit_code != 0) {
      ADD_FAILURE() << "ip netns add " << ns_ << ": " << r.output;
      return;
    }
    const std::string dir = ::testing::TempDir() + "/" + ns_;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    config_ = dir + "/dpdk.toml";
    log_ = dir + "/node.log";
    std::ofstream(config_) << "[runtime]\ncores = [0]\n"
                           << "[net]\nbackend = \"dpdk\"\nlisten = \"10.78.0.2:8080\"\n"
                           << "[net.dpdk]\neal_args = [\"--no-pci\", \"--log-level=*:warning\", "
                           << "\"--vdev=net_tap0,iface=" << tap_ << "\"]\n"
                           << "hugepages = \"auto\"\nport = \"net_tap0\"\nip = \"10.78.0.2\"\nprefix_len = 24\n"
                           << "rx_descriptors = 256\ntx_descriptors = 256\n"
                           << "[state]\ndir = \"" << dir << "/state\"\n"
                           << "[energy]\nledger = \"" << dir << "/ledger.db\"\n";  // functions: the defaults
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log_.c_str(), "w", stdout);
      (void)f;
      dup2(fileno(stdout), 2);
      // ip netns exec execs the node: pid_ is the node's pid.
      execlp("ip", "ip", "netns", "exec", ns_.c_str(), FAASNODE_BIN, "serve", "--config", config_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 300; ++i) {  // up to 30 s: EAL start, port up, the tap's address
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "faasnode exited; its log:\n" << Log();
        return;
      }
      if (RunCommand("ip -n " + ns_ + " link show " + tap_).exit_code == 0) {
        if (!addressed_) {
          auto r = RunCommand("ip -n " + ns_ + " addr add 10.78.0.1/24 dev " + tap_ + " && ip -n " + ns_ +
                              " link set " + tap_ + " up");
          addressed_ = r.exit_code == 0;
        }
        if (addressed_ && Curl("-o /dev/null -w '%{http_code}' --max-time 1 " + Url("/healthz")).output == "200") {
          up_ = true;
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the dpdk node did not answer /healthz in 30 s; its log:\n" << Log();
  }
  ~DpdkNode() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    RunCommand("ip netns del " + ns_);
  }
  bool up() const { return up_; }
  const std::string& ns() const { return ns_; }
  std::string Url(const std::string& path) const { return "http://10.78.0.2:8080" + path; }
  // curl from inside the namespace, to the node's own stack.
  CommandResult Curl(const std::string& args) const {
    return RunCommand("ip netns exec " + ns_ + " curl -s --max-time 10 " + args);
  }
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

 private:
  std::string ns_, tap_, config_, log_;
  pid_t pid_ = -1;
  bool addressed_ = false;
  bool up_ = false;
};

std::string SkipReason() {
  if (geteuid() != 0) return "needs root (a network namespace and a tap device)";
  if (RunCommand("command -v curl").exit_code != 0) return "curl is not installed (scripts/setup.sh installs it)";
  if (RunCommand("command -v ip").exit_code != 0) return "ip (iproute2) is not installed (scripts/setup.sh installs it)";
  if (access("/dev/net/tun", R_OK | W_OK) != 0) return "/dev/net/tun is absent: no tap devices here";
  return "";
}

TEST(DpdkServeEndToEnd, EverySampleFunctionAnswersCurlFromTheNamespace) {
  if (const std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  DpdkNode node;
  ASSERT_TRUE(node.up());
  EXPECT_EQ(node.Curl(node.Url("/healthz")).output, "OK");
  // Native functions.
  EXPECT_EQ(node.Curl("-d hello " + node.Url("/function/echo")).output, "hello");
  EXPECT_NE(node.Curl("'" + node.Url("/function/hello?name=ada") + "'").output.find("ada"), std::string::npos);
  EXPECT_EQ(node.Curl("-d '[1,2,3,4]' " + node.Url("/function/json-stats")).output,
            R"({"count":4,"max":4.0,"mean":2.5,"median":2.5,"min":1.0,"stddev":1.118033988749895})");
  EXPECT_EQ(node.Curl("--data-binary abc " + node.Url("/function/sha256")).output,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
  auto sleep = node.Curl("-w ' %{http_code}' '" + node.Url("/function/sleep?ms=50") + "'");
  EXPECT_EQ(sleep.output, R"({"slept_ms":50} 200)");
  auto burn = node.Curl("-w ' %{http_code}' '" + node.Url("/function/cpu-burn?rounds=1000") + "'");
  EXPECT_NE(burn.output.find("\"hash\""), std::string::npos) << burn.output;
  EXPECT_TRUE(burn.output.ends_with(" 200")) << burn.output;
  // swiglu-mlp on the CPU: one bf16 token of zeros.
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/dpdk-swiglu.bf16", std::ios::binary) << std::string(2 * 896, '\0');
  auto bin = node.Curl("-o " + dir + "/dpdk-swiglu.out -w '%{http_code} %{size_download}' "
                       "-H 'Content-Type: application/octet-stream' --data-binary @" + dir +
                       "/dpdk-swiglu.bf16 '" + node.Url("/function/swiglu-mlp?model=0.5b&dtype=bf16") + "'");
  EXPECT_EQ(bin.output, "200 1792");  // SiLU(0)·0 = 0: 896 bf16 zeros back
  // A body of many segments through the user-space stack both ways: 256 KiB echoed, hashed.
  {
    std::string big(256 * 1024, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i * 7919) % 26);
    std::ofstream(dir + "/dpdk-big.bin", std::ios::binary) << big;
  }
  const std::string want = RunCommand("sha256sum " + dir + "/dpdk-big.bin | cut -d' ' -f1").output;
  EXPECT_EQ(node.Curl("--data-binary @" + dir + "/dpdk-big.bin " + node.Url("/function/sha256")).output, want);
  EXPECT_EQ(RunCommand("ip netns exec " + node.ns() + " curl -s --max-time 10 --data-binary @" + dir + "/dpdk-big.bin " +
                       node.Url("/function/echo") + " | sha256sum | cut -d' ' -f1").output,
            want);
  // Exec functions (one sandboxed child per request).
  EXPECT_EQ(node.Curl("--data-binary 'hello exec' " + node.Url("/function/cat")).output, "hello exec");
  EXPECT_EQ(RunCommand("printf 'a\\nb\\nc\\n' | ip netns exec " + node.ns() + " curl -s --max-time 10 --data-binary @- " + node.Url("/function/wc")).output,
            "3\n");
  EXPECT_EQ(node.Curl("--data-binary abc " + node.Url("/function/sha512sum")).output,
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd4"
            "54d4423643ce80e2a9ac94fa54ca49f  -\n");
  // Errors and the invocation headers, as on the kernel backend.
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' " + node.Url("/function/nope")).output, "404");
  EXPECT_EQ(node.Curl("-o /dev/null -w '%{http_code}' -d nope " + node.Url("/function/json-stats")).output, "400");
  auto headers = node.Curl("-D - -o /dev/null -d x " + node.Url("/function/echo"));
  EXPECT_NE(headers.output.find("HTTP/1.1 200"), std::string::npos) << headers.output;
  EXPECT_NE(headers.output.find("X-Call-Id:"), std::string::npos) << headers.output;
  EXPECT_NE(headers.output.find("X-Duration-Seconds:"), std::string::npos) << headers.output;
  EXPECT_NE(headers.output.find("X-Energy-Joules:"), std::string::npos) << headers.output;
  // Keep-alive: several requests on one connection of the user-space stack.
  auto keep = node.Curl("-w '%{num_connects} ' " + node.Url("/function/hello?name=a") + " " +
                        node.Url("/function/hello?name=b") + " " + node.Url("/function/hello?name=c"));
  EXPECT_EQ(keep.output, "Hello, a!\n1 Hello, b!\n0 Hello, c!\n0 ") << "one connection for the three";
  EXPECT_EQ(node.Stop(), 0) << node.Log();
  const std::string log = node.Log();
  EXPECT_NE(log.find("dpdk: port 0 (net_tap0) up"), std::string::npos) << log;
  EXPECT_NE(log.find("draining"), std::string::npos) << log;
}

}  // namespace
