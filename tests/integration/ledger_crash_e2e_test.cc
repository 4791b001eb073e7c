// ledger_crash_e2e_test.cc — the energy ledger of the real `faasnode serve` across kill -9 under
// load: on restart the node says how many ledger rows the crash lost, and that number is the
// gap in the ledger's sequence numbers (issued, minus rows and aggregates present). Also the
// carbon config end to end: a trace gap held, said by X-Carbon-Intensity-Kind and by
// `faasnode carbon report`, and the ledger's counters on /metrics.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

#include "tests/integration/e2e_util.h"

namespace {

using faasnode::e2e::CommandResult;
using faasnode::e2e::FreePort;
using faasnode::e2e::HaveCurl;
using faasnode::e2e::RunCommand;

// One node config and ledger that outlive the processes serving them (a restart reuses both).
class NodeFiles {
 public:
  explicit NodeFiles(const std::string& name) {
    port_ = FreePort();
    dir_ = ::testing::TempDir() + "/ledger-crash-" + name + "-" + std::to_string(port_);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // Hourly rows around now: measured two hours back and on, a gap in between (held at 100).
    const long long hour = std::time(nullptr) / 3600 * 3600;
    std::ofstream(dir_ + "/trace.csv") << "timestamp,gco2e_per_kwh\n" << hour - 7200 << ",100\n" << hour - 3600
                                       << ",\n" << hour << ",\n" << hour + 3600 << ",\n" << hour + 7200 << ",300\n";
    std::ofstream(dir_ + "/node.toml")
        << "[runtime]\ncores = [0]\n[net]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
        << "[state]\ndir = \"" << dir_ << "/state\"\nauth = false\n"
        << "[functions.echo]\n"
        << "[energy]\nledger = \"" << ledger() << "\"\ncarbon_trace = \"" << dir_ << "/trace.csv\"\n"
        << "carbon_gaps = \"hold\"\nembodied_g_per_core_second = 1e-4\n";
  }
  std::string ledger() const { return dir_ + "/ledger.db"; }
  std::string config() const { return dir_ + "/node.toml"; }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  int port_ = 0;
  std::string dir_;
};

pid_t Spawn(const std::string& log, const char* const argv[]) {
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), 2);
    execvp(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  return pid;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

CommandResult Curl(const std::string& args) { return RunCommand("curl -s --max-time 10 " + args); }

// Starts `faasnode serve` and waits for /healthz; its stdout and stderr go to `log`.
pid_t StartNode(const NodeFiles& n, const std::string& log) {
  const std::string config = n.config();
  const char* argv[] = {FAASNODE_BIN, "serve", "--config", config.c_str(), nullptr};
  const pid_t pid = Spawn(log, argv);
  for (int i = 0; i < 200; ++i) {  // up to 10 s
    if (Curl("-o /dev/null -w '%{http_code}' " + n.Url("/healthz")).output == "200") return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "faasnode did not come up; its log:\n" << ReadFile(log);
  return pid;
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

long long Sql(const std::string& ledger, const std::string& query) {
  const CommandResult r = RunCommand("sqlite3 -readonly '" + ledger + "' \"" + query + "\"");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return std::atoll(r.output.c_str());
}

TEST(LedgerCrash, RestartAfterKill9UnderLoadSaysHowManyRowsWereLost) {
  if (!HaveCurl() || RunCommand("command -v hey && command -v sqlite3").exit_code != 0) {
    GTEST_SKIP() << "needs curl, hey and sqlite3 (scripts/setup.sh installs them)";
  }
  NodeFiles files("kill9");
  const std::string ledger = files.ledger();
  const std::string url = files.Url("/function/echo");
  // Rows in flight at the kill (pushed to the ledger, not committed) exist most of the time
  // under load, not always: up to five kills, until one loses rows.
  pid_t node = StartNode(files, ledger + ".log0");
  long long lost_seen = 0;
  long long lost_sum = 0;
  for (int round = 1; round <= 5 && lost_seen == 0; ++round) {
    const char* hey[] = {"hey", "-z", "20s", "-c", "16", "-m", "POST", "-d", "hi", url.c_str(), nullptr};
    const pid_t load = Spawn(ledger + ".hey", hey);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    KillAndReap(node);  // kill -9 under load
    KillAndReap(load);
    // What the ledger holds now, read apart from the node: rows plus aggregated records plus
    // records still in packs (the writer was behind under load; the next start expands them).
    const long long present =
        Sql(ledger, "SELECT (SELECT count(*) FROM invocations) + "
                    "(SELECT coalesce(sum(records), 0) FROM overflow_aggregates) + "
                    "(SELECT coalesce(sum(records), 0) FROM invocation_packs)");
    ASSERT_GT(present, 0) << "the load was billed before the kill";
    const std::string log = ledger + ".log" + std::to_string(round);
    node = StartNode(files, log);
    const std::string text = ReadFile(log);
    std::smatch m;
    if (std::regex_search(text, m, std::regex(R"((\d+) invocation row\(s\) were lost in a crash before this start)"))) {
      const long long lost = std::atoll(m[1].str().c_str());
      EXPECT_GT(lost, 0);
      lost_seen = lost;
      lost_sum += lost;
      // The number is the gap in the sequence numbers: issued (recorded with the report),
      // minus what was present, minus what earlier crashes had already lost.
      const long long issued = Sql(ledger, "SELECT seq_issued FROM crash_reports ORDER BY id DESC LIMIT 1");
      EXPECT_EQ(lost, issued - present - (lost_sum - lost)) << text;
      EXPECT_EQ(Sql(ledger, "SELECT rows_lost FROM crash_reports ORDER BY id DESC LIMIT 1"), lost);
      // At most the batch in flight plus the queued records (max_batch + one queue).
      EXPECT_LE(lost, 8192 + 16384);
    } else {
      EXPECT_NE(text.find("none lost before this start"), std::string::npos)
          << "a restart says how many rows were lost, zero included; its log:\n" << text;
    }
  }
  EXPECT_GT(lost_seen, 0) << "five kill -9s under load never caught a row in flight";
  // The restarted node bills again, its rows numbered after the lost ones.
  EXPECT_EQ(Curl("-o /dev/null -w '%{http_code}' -d hi " + url).output, "200");
  kill(node, SIGTERM);
  int status = 0;
  waitpid(node, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// The [energy] carbon keys reach the bill: the trace's gap is held (header, report) and the
// embodied rate prices core-seconds; the ledger's counters are on /metrics.
TEST(LedgerCrash, CarbonConfigReachesTheHeaderTheReportAndMetrics) {
  if (!HaveCurl()) GTEST_SKIP() << "needs curl";
  NodeFiles files("carbon");
  const pid_t node = StartNode(files, files.ledger() + ".log");
  const std::string url = files.Url("/function/echo");
  const CommandResult r = Curl("-i -d hi " + url);
  EXPECT_NE(r.output.find("X-Carbon-Intensity-Kind: held\r\n"), std::string::npos) << r.output;
  for (int i = 0; i < 20; ++i) Curl("-o /dev/null -d hi " + url);
  const std::string metrics = Curl(files.Url("/metrics")).output;
  EXPECT_NE(metrics.find("\nfaasnode_ledger_records_aggregated_total 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nfaasnode_ledger_rows_lost_total 0\n"), std::string::npos) << metrics;
  kill(node, SIGTERM);
  waitpid(node, nullptr, 0);
  const CommandResult csv = RunCommand(std::string(FAASNODE_BIN) + " carbon report --format csv --ledger " + files.ledger());
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find("function,source,calls,joules,grams_co2e,embodied_grams,intensity_kind\n"),
            std::string::npos) << csv.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(csv.output, m, std::regex(R"(\necho,model,(\d+),[^,]+,[^,]+,([^,]+),held\n)"))) << csv.output;
  EXPECT_EQ(std::atoi(m[1].str().c_str()), 21);
  EXPECT_GT(std::atof(m[2].str().c_str()), 0.0) << "embodied_g_per_core_second reaches the bill";
  const CommandResult json = RunCommand(std::string(FAASNODE_BIN) + " carbon report --format json --ledger " + files.ledger());
  EXPECT_NE(json.output.find("\"intensity_kind\":\"held\""), std::string::npos) << json.output;
}

}  // namespace
