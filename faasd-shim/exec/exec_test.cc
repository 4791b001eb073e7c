// exec_test.cc — every exec rule against real children: stdin/stdout, combine_output, Http_*
// env, exit != 0 -> 500, exec_timeout -> 408 with the process group killed, 429 past
// max_inflight, the core not blocked, nobody + no_new_privs, the private temp dir, rlimits.
#include "faasd-shim/exec/exec_function.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "faasd-shim/exec/http_env.h"
#include "faasd-shim/instances/function_pool.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::exec {
namespace {
using namespace std::chrono_literals;
using junction::sched::testing::RunOnCores;

class RecordingSink final : public LogSink {
 public:
  struct Entry {
    std::string function, instance;
    LogStream stream;
    std::string text;
  };
  void Line(std::string_view function, std::string_view instance, LogStream stream, std::string_view text) override {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back({std::string(function), std::string(instance), stream, std::string(text)});
  }
  std::vector<Entry> entries() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_;
  }

 private:
  std::mutex mu_;
  std::vector<Entry> entries_;
};

// A directory every user may read and run scripts from, and a tmp_root of the test's own.
class ExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/faasnode-exec-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    chmod(dir_.c_str(), 0755);
    tmp_root_ = dir_ + "/tmp";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  ExecSpec Spec(std::string fprocess) {
    ExecSpec s;
    s.name = "t";
    s.fprocess = std::move(fprocess);
    s.tmp_root = tmp_root_;
    s.log = sink_;
    return s;
  }
  // Creates the function and runs one request on a 2-core runtime.
  store::Response Run(ExecSpec spec, store::Request req = {}) {
    store::Response resp;
    RunOnCores(2, [&] {
      auto fn = ExecFunction::Create(std::move(spec));
      ASSERT_TRUE(fn.has_value()) << fn.error().message();
      auto inst = (*fn)->NewInstance();
      ASSERT_TRUE(inst.has_value());
      auto s = (*inst)->Invoke(req, resp);
      ASSERT_TRUE(s.has_value()) << s.error().message();
    });
    return resp;
  }
  std::string dir_, tmp_root_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
};

bool IsRoot() { return geteuid() == 0; }

TEST(HttpEnv, GoCanonicalNamesAndTheWatchdogsVariables) {
  EXPECT_EQ(CanonicalHeaderName("x-foo-BAR"), "X-Foo-Bar");
  EXPECT_EQ(CanonicalHeaderName("content-type"), "Content-Type");
  store::Header hs[] = {{"x-foo", "bar"}, {"Host", "h"}, {"X-FOO", "second"}, {"accept", "*/*"}};
  std::vector<std::string> env;
  AppendHttpEnv({.method = "PUT", .path = "", .query = "a=1&b=2", .headers = hs, .body = "12345"}, env);
  auto has = [&](const std::string& v) { return std::ranges::find(env, v) != env.end(); };
  EXPECT_TRUE(has("Http_X_Foo=bar"));
  EXPECT_TRUE(has("Http_Accept=*/*"));
  EXPECT_TRUE(has("Http_Method=PUT"));
  EXPECT_TRUE(has("Http_Query=a=1&b=2"));
  EXPECT_TRUE(has("Http_Path=/"));
  EXPECT_TRUE(has("Http_ContentLength=5"));
  EXPECT_FALSE(has("Http_X_Foo=second"));
  for (const auto& e : env) EXPECT_FALSE(e.starts_with("Http_Host=")) << e;
  env.clear();
  AppendHttpEnv({.method = "GET", .path = "/p"}, env);
  for (const auto& e : env) EXPECT_FALSE(e.starts_with("Http_Query=")) << e;
}

TEST_F(ExecTest, BodyGoesToStdinAndStdoutIsTheResponse) {
  auto resp = Run(Spec("cat"), {.method = "POST", .body = "hello\nworld"});
  EXPECT_EQ(resp.status, 200);
  EXPECT_EQ(resp.body, "hello\nworld");
  // Larger than a pipe's buffer both ways: the pump interleaves writes and reads.
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4097) big[i] = static_cast<char>('a' + i % 26);
  resp = Run(Spec("cat"), {.method = "POST", .body = big});
  EXPECT_EQ(resp.status, 200);
  EXPECT_TRUE(resp.body == big) << "got " << resp.body.size() << " bytes";
  resp = Run(Spec("wc -l"), {.method = "POST", .body = "a\nb\nc\n"});
  EXPECT_EQ(resp.body, "3\n");
}

TEST_F(ExecTest, AChildThatIgnoresItsStdinDoesNotKillTheNode) {
  // More than a pipe holds: the write after the child exits fails with EPIPE (and SIGPIPE).
  auto resp = Run(Spec("true"), {.method = "POST", .body = std::string(1 << 20, 'x')});
  EXPECT_EQ(resp.status, 200);
  EXPECT_EQ(resp.body, "");
}

TEST_F(ExecTest, ArgumentsAreSplitOnSpacesWithoutAShell) {
  auto resp = Run(Spec("echo a  b $HOME '*'"));
  EXPECT_EQ(resp.body, "a b $HOME '*'\n");
}

TEST_F(ExecTest, CombineOutputAppendsStderrOtherwiseItIsLogged) {
  const std::string s = Script("both.sh", "echo out\nsleep 0.05\necho err >&2");
  auto spec = Spec(s);
  spec.combine_output = true;
  auto resp = Run(spec);
  EXPECT_EQ(resp.body, "out\nerr\n");
  spec.combine_output = false;
  resp = Run(spec);
  EXPECT_EQ(resp.body, "out\n");
  bool logged = false;
  for (const auto& e : sink_->entries()) {
    if (e.stream == LogStream::kStderr && e.text == "err") logged = (e.function == "t" && e.instance == "t-1");
  }
  EXPECT_TRUE(logged);
}

TEST_F(ExecTest, WatchdogLinesGoToTheSink) {
  Run(Spec("cat"), {.method = "POST", .body = "12345"});
  std::vector<std::string> lines;
  for (const auto& e : sink_->entries()) {
    if (e.stream == LogStream::kWatchdog) lines.push_back(e.text);
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Forking fprocess.");
  EXPECT_TRUE(lines[1].starts_with("Wrote 5 Bytes - Duration: ")) << lines[1];
}

TEST_F(ExecTest, HttpVariablesAndDeploymentEnvReachTheChild) {
  auto spec = Spec("env");
  spec.env = {{"GREETING", "hi"}};
  store::Header hs[] = {{"X-Foo", "bar"}, {"content-type", "text/plain"}, {"Host", "node"}};
  auto resp = Run(spec, {.method = "POST", .path = "/sub", .query = "a=1", .headers = hs, .body = "xyz"});
  ASSERT_EQ(resp.status, 200);
  std::istringstream in(resp.body);
  std::vector<std::string> env;
  for (std::string l; std::getline(in, l);) env.push_back(l);
  auto has = [&](const std::string& v) { return std::ranges::find(env, v) != env.end(); };
  EXPECT_TRUE(has("Http_Method=POST"));
  EXPECT_TRUE(has("Http_Path=/sub"));
  EXPECT_TRUE(has("Http_Query=a=1"));
  EXPECT_TRUE(has("Http_ContentLength=3"));
  EXPECT_TRUE(has("Http_X_Foo=bar"));
  EXPECT_TRUE(has("Http_Content_Type=text/plain"));
  EXPECT_TRUE(has("GREETING=hi"));
  EXPECT_TRUE(has("fprocess=env"));
  for (const auto& e : env) EXPECT_FALSE(e.starts_with("Http_Host")) << e;
  // The request's Content-Type comes back, as the classic watchdog does.
  ASSERT_EQ(resp.headers.size(), 1u);
  EXPECT_EQ(resp.headers[0].second, "text/plain");
}

TEST_F(ExecTest, NonZeroExitIs500WithTheErrorText) {
  auto spec = Spec("cat /no/such/file");
  spec.combine_output = false;
  auto resp = Run(spec);
  EXPECT_EQ(resp.status, 500);
  EXPECT_NE(resp.body.find("exited with exit status 1"), std::string::npos) << resp.body;
  EXPECT_NE(resp.body.find("No such file or directory"), std::string::npos) << resp.body;
  resp = Run(Spec(Script("kill.sh", "kill -9 $$")));
  EXPECT_EQ(resp.status, 500);
  EXPECT_NE(resp.body.find("killed by signal 9"), std::string::npos) << resp.body;
}

bool Gone(pid_t pid) {
  // Absent, or a zombie nobody has reaped yet (it no longer runs).
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

TEST_F(ExecTest, TimeoutIs408AndTheWholeProcessGroupIsKilled) {
  auto spec = Spec(Script("hang.sh", "sleep 30 &\necho \"pids $$ $!\" >&2\nsleep 30"));
  spec.exec_timeout = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  auto resp = Run(spec);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(resp.status, 408);
  EXPECT_NE(resp.body.find("exec_timeout (300 ms)"), std::string::npos) << resp.body;
  EXPECT_LT(took, 5s);
  pid_t leader = 0, background = 0;
  for (const auto& e : sink_->entries()) {
    if (e.stream == LogStream::kStderr && e.text.starts_with("pids ")) {
      std::istringstream(e.text.substr(5)) >> leader >> background;
    }
  }
  ASSERT_GT(leader, 0);
  ASSERT_GT(background, 0);
  for (int i = 0; i < 200 && !(Gone(leader) && Gone(background)); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(Gone(leader));
  EXPECT_TRUE(Gone(background)) << "the script's background sleep survived the timeout";
}

TEST_F(ExecTest, OutputPastTheLimitIs500) {
  auto spec = Spec("head -c 1000000 /dev/zero");
  spec.max_output_bytes = 1000;
  auto resp = Run(spec);
  EXPECT_EQ(resp.status, 500);
  EXPECT_NE(resp.body.find("more than 1000 bytes"), std::string::npos) << resp.body;
}

TEST_F(ExecTest, AChildNeverBlocksItsCore) {
  // One core: while the child sleeps, another uthread keeps ticking on that same core.
  junction::sched::testing::RunOnCores(1, [&] {
    auto fn = ExecFunction::Create(Spec("sleep 0.3"));
    ASSERT_TRUE(fn.has_value()) << fn.error().message();
    std::atomic<bool> done{false};
    int status = 0;
    auto h = junction::sched::Spawn([&] {
      auto inst = (*fn)->NewInstance();
      store::Response resp;
      ASSERT_TRUE((*inst)->Invoke({}, resp).has_value());
      status = resp.status;
      done = true;
    });
    ASSERT_TRUE(h.has_value());
    int ticks = 0;
    while (!done) {
      junction::sched::SleepFor(5ms);
      ++ticks;
    }
    h->Join();
    EXPECT_EQ(status, 200);
    EXPECT_GE(ticks, 30) << "the core was blocked while the child ran";
  });
}

TEST_F(ExecTest, PastMaxInflightIs429) {
  RunOnCores(2, [&] {
    auto fn = ExecFunction::Create(Spec("sleep 0.3"));
    ASSERT_TRUE(fn.has_value()) << fn.error().message();
    instances::PoolOptions opts;
    opts.replicas = 1;
    opts.max_inflight = 1;
    instances::FunctionPool pool("slow", [fn = *fn] { return fn->NewInstance(); }, opts);
    instances::FunctionPool* p = &pool;
    std::atomic<int> served{0}, overloaded{0};
    std::vector<junction::sched::JoinHandle> hs;
    for (int i = 0; i < 2; ++i) {
      hs.push_back(*junction::sched::Spawn([&, i] {
        if (i == 1) junction::sched::SleepFor(100ms);  // the first is running by then
        store::Response resp;
        auto o = p->Invoke({}, resp);
        if (o.kind == instances::InvokeOutcome::Kind::kServed && resp.status == 200) served++;
        if (o.kind == instances::InvokeOutcome::Kind::kOverloaded) overloaded++;
      }));
    }
    for (auto& h : hs) h.Join();
    EXPECT_EQ(served.load(), 1);
    EXPECT_EQ(overloaded.load(), 1);
  });
}

TEST_F(ExecTest, ChildrenRunAsNobodyWithNoNewPrivs) {
  if (!IsRoot()) GTEST_SKIP() << "switching children to nobody needs the node to be root";
  passwd* pw = getpwnam("nobody");
  ASSERT_NE(pw, nullptr);
  auto resp = Run(Spec("id -u"));
  EXPECT_EQ(resp.body, std::to_string(pw->pw_uid) + "\n");
  resp = Run(Spec("id -G"));
  EXPECT_EQ(resp.body, std::to_string(pw->pw_gid) + "\n") << "supplementary groups were kept";
  resp = Run(Spec("grep -E ^(NoNewPrivs|Uid): /proc/self/status"));
  EXPECT_NE(resp.body.find("NoNewPrivs:\t1"), std::string::npos) << resp.body;
  const std::string u = std::to_string(pw->pw_uid);
  EXPECT_NE(resp.body.find("Uid:\t" + u + "\t" + u + "\t" + u + "\t" + u), std::string::npos) << resp.body;
  // Its own process group.
  resp = Run(Spec(Script("pg.sh", "echo $$ $(ps -o pgid= -p $$)")));
  std::istringstream in(resp.body);
  long pid = 0, pgid = 0;
  in >> pid >> pgid;
  EXPECT_EQ(pid, pgid) << resp.body;
}

TEST_F(ExecTest, RootIsRefusedAsTheChildUser) {
  if (!IsRoot()) GTEST_SKIP() << "the user is only switched when the node is root";
  auto spec = Spec("cat");
  spec.user = "root";
  auto fn = ExecFunction::Create(spec);
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("never run as root"), std::string::npos) << fn.error().message();
  spec.user = "no-such-user-here";
  fn = ExecFunction::Create(spec);
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("does not exist"), std::string::npos);
}

TEST_F(ExecTest, BadSpecsAreRefusedWithTheField) {
  auto fn = ExecFunction::Create(Spec(""));
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("fprocess is empty"), std::string::npos);
  fn = ExecFunction::Create(Spec("no-such-program-anywhere --x"));
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("no executable no-such-program-anywhere in PATH"), std::string::npos);
  auto spec = Spec("cat");
  spec.secrets_dir = "/no/such/dir";
  fn = ExecFunction::Create(spec);
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("secrets dir"), std::string::npos);
}

TEST_F(ExecTest, EachCallGetsAPrivateTempDirRemovedAfterwards) {
  const std::string s = Script("tmp.sh", "pwd\nstat -c '%a %u' .\necho \"$TMPDIR\"\necho \"$HOME\"\ntouch f && echo wrote");
  auto resp = Run(Spec(s));
  ASSERT_EQ(resp.status, 200) << resp.body;
  std::istringstream in(resp.body);
  std::string cwd, mode_owner, tmpdir, home, wrote;
  std::getline(in, cwd);
  std::getline(in, mode_owner);
  std::getline(in, tmpdir);
  std::getline(in, home);
  std::getline(in, wrote);
  EXPECT_TRUE(cwd.starts_with(tmp_root_ + "/t-")) << cwd;
  EXPECT_EQ(tmpdir, cwd);
  EXPECT_EQ(home, cwd);
  EXPECT_EQ(wrote, "wrote");
  const std::string uid = IsRoot() ? std::to_string(getpwnam("nobody")->pw_uid) : std::to_string(geteuid());
  EXPECT_EQ(mode_owner, "700 " + uid);
  EXPECT_FALSE(std::filesystem::exists(cwd)) << "the temp dir was left behind";
  struct stat st {};
  ASSERT_EQ(stat(tmp_root_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0711u) << "other children could list the temp dirs";
}

TEST_F(ExecTest, MemoryLimitIsEnforced) {
  auto spec = Spec("dd if=/dev/zero of=/dev/null bs=128M count=1");
  spec.limits.memory_bytes = 64 << 20;
  auto resp = Run(spec);
  EXPECT_EQ(resp.status, 500) << resp.body;
  EXPECT_NE(resp.body.find("memory exhausted"), std::string::npos) << resp.body;
  spec.limits.memory_bytes = 512 << 20;
  resp = Run(spec);
  EXPECT_EQ(resp.status, 200) << resp.body;
  spec = Spec("grep -E ^Max.(address.space|open.files|core.file.size) /proc/self/limits");
  spec.limits.memory_bytes = 64 << 20;
  spec.limits.open_files = 32;
  resp = Run(spec);
  EXPECT_NE(resp.body.find("67108864"), std::string::npos) << resp.body;
  EXPECT_NE(resp.body.find("Max open files            32"), std::string::npos) << resp.body;
  EXPECT_NE(resp.body.find("Max core file size        0"), std::string::npos) << resp.body;
}

}  // namespace
}  // namespace faasnode::exec
