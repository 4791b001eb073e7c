// exec_function.cc — resolving an exec function and running one child per request on the
// runtime (see exec_function.h).
#include "faasd-shim/exec/exec_function.h"

#include <pwd.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "faasd-shim/exec/http_env.h"
#include "junction/net/io_waiter.h"
#include "junction/net/kernel_poller.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace faasnode::exec {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;
namespace sched = junction::sched;

namespace {

constexpr std::string_view kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr std::size_t kReadChunk = 16 * 1024;
constexpr std::size_t kErrorTextBytes = 4096;  // stderr kept for a 500's body
constexpr std::size_t kMaxLogLine = 4096;      // a longer stderr line is split
constexpr auto kKillGrace = std::chrono::seconds(5);  // for a SIGKILLed child to be reapable

// The exec children's epoll set of the calling uthread's core, started on first use. Per
// kthread (each core is one), tagged with its runtime: a runtime destroyed and another created
// drops the old set (its hooks, the other owners, are gone then).
std::shared_ptr<junction::net::CorePoller> ThisCorePoller() {
  struct Slot {
    sched::Runtime* runtime = nullptr;
    std::shared_ptr<junction::net::CorePoller> poller;
  };
  thread_local Slot slot;
  sched::Runtime* rt = sched::Runtime::Current();
  if (slot.poller == nullptr || slot.runtime != rt || slot.poller.use_count() == 1) {
    auto p = junction::net::CorePoller::StartOnThisCore(/*interval_us=*/20, /*busy_interval_us=*/20);
    if (!p) return nullptr;
    slot = {rt, std::move(*p)};
  }
  return slot.poller;
}

// Every fd of one child points here; any edge bumps the epoch the pumping uthread waits on.
class ChildWatch final : public junction::net::PollTarget {
 public:
  void OnEvents(std::uint32_t) override { waiter.Notify(); }
  junction::net::IoWaiter waiter;
};

bool IsTokenChar(unsigned char c) {
  return std::isalnum(c) || std::string_view("-_.").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string EnvValue(const std::vector<std::pair<std::string, std::string>>& env, std::string_view key,
                     std::string_view fallback) {
  for (const auto& [k, v] : env) {
    if (k == key) return v;
  }
  return std::string(fallback);
}

// PATH look-up as execvp does it, at deploy time.
Status<std::string> ResolveProgram(const std::string& program, std::string_view path) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    if (executable(program)) return std::filesystem::absolute(program).string();
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is not an executable file", program));
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    std::string dir(path.substr(start, end - start));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    if (executable(candidate)) return std::filesystem::absolute(candidate).string();
    start = end + 1;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("no executable {} in PATH ({}); install it or give its absolute path", program, path));
}

// Appends complete lines of `data` to the sink, keeping a partial last line in `partial`.
template <typename F>
void SplitLines(std::string_view data, std::string& partial, F&& emit) {
  while (!data.empty()) {
    const std::size_t nl = data.find('\n');
    const std::string_view piece = data.substr(0, nl);
    partial.append(piece);
    if (nl == std::string_view::npos) {
      if (partial.size() >= kMaxLogLine) {
        emit(std::string_view(partial));
        partial.clear();
      }
      return;
    }
    emit(std::string_view(partial));
    partial.clear();
    data.remove_prefix(nl + 1);
  }
}

class ExecInstance final : public store::FunctionInstance {
 public:
  ExecInstance(std::shared_ptr<const ExecFunction> fn, std::string id) : fn_(std::move(fn)), id_(std::move(id)) {}
  Status<void> Invoke(const store::Request& request, store::Response& response) const override {
    return fn_->Invoke(request, response, id_);
  }
  std::string_view name() const override { return fn_->spec().name; }

 private:
  std::shared_ptr<const ExecFunction> fn_;
  std::string id_;
};

}  // namespace

ExecFunction::ExecFunction(ExecSpec spec, std::string program, std::vector<std::string> argv,
                           Credentials credentials)
    : spec_(std::move(spec)), program_(std::move(program)), argv_(std::move(argv)), credentials_(credentials) {}

Status<std::shared_ptr<ExecFunction>> ExecFunction::Create(ExecSpec spec) {
  auto bad = [&](std::string what) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("exec function {}: {}", spec.name, what));
  };
  if (spec.name.empty() || !std::ranges::all_of(spec.name, [](char c) { return IsTokenChar(static_cast<unsigned char>(c)); })) {
    return bad("the name must be letters, digits, '-', '_' or '.'");
  }
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < spec.fprocess.size();) {
    const std::size_t j = std::min(spec.fprocess.find(' ', i), spec.fprocess.size());
    if (j > i) argv.push_back(spec.fprocess.substr(i, j - i));
    i = j + 1;
  }
  if (argv.empty()) return bad("fprocess is empty; give the program to run, e.g. \"cat\"");
  for (const auto& [k, v] : spec.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos ||
        v.find('\0') != std::string::npos) {
      return bad(fmt::format("env var '{}' must be a non-empty name without '=' or NUL", k));
    }
  }
  auto program = ResolveProgram(argv[0], EnvValue(spec.env, "PATH", kDefaultPath));
  if (!program) return bad(program.error().message());

  Credentials creds;
  if (geteuid() == 0) {
    passwd pw{}, *found = nullptr;
    std::vector<char> buf(16384);
    if (getpwnam_r(spec.user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
      return bad(fmt::format("user '{}' does not exist; set functions.exec_user to an unprivileged user", spec.user));
    }
    if (pw.pw_uid == 0 || pw.pw_gid == 0) {
      return bad(fmt::format("user '{}' is root (uid/gid 0); exec children never run as root, pick an "
                             "unprivileged user such as nobody", spec.user));
    }
    creds = {.change = true, .uid = pw.pw_uid, .gid = pw.pw_gid};
  } else {
    static std::once_flag once;
    std::call_once(once, [] {
      spdlog::warn("exec functions: the node is not root, so children run as its own user (uid {}), not "
                   "functions.exec_user", geteuid());
    });
  }
  if (!spec.secrets_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(spec.secrets_dir, ec)) {
      return bad(fmt::format("secrets dir {} is not a directory", spec.secrets_dir));
    }
  }
  if (spec.tmp_root.empty()) return bad("tmp_root is empty; give a directory for the per-call temp dirs");
  if (mkdir(spec.tmp_root.c_str(), 0711) != 0 && errno != EEXIST) {
    return bad(fmt::format("cannot create tmp_root {}: {}", spec.tmp_root, std::strerror(errno)));
  }
  struct stat st {};
  if (stat(spec.tmp_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return bad(fmt::format("tmp_root {} is not a directory", spec.tmp_root));
  }
  if ((st.st_mode & 0777) != 0711 && st.st_uid == geteuid()) (void)chmod(spec.tmp_root.c_str(), 0711);
  // A child that exits without reading its stdin makes our next write fail with EPIPE; the
  // SIGPIPE that comes with it must not end the node. (Children get default dispositions.)
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { std::signal(SIGPIPE, SIG_IGN); });
  std::string prog = std::move(*program);
  return std::make_shared<ExecFunction>(std::move(spec), std::move(prog), std::move(argv), creds);
}

Status<std::unique_ptr<store::FunctionInstance>> ExecFunction::NewInstance() const {
  const std::uint64_t n = instances_.fetch_add(1, std::memory_order_relaxed) + 1;
  return std::make_unique<ExecInstance>(shared_from_this(), fmt::format("{}-{}", spec_.name, n));
}

void ExecFunction::Log(std::string_view instance, LogStream stream, std::string_view text) const {
  if (spec_.log != nullptr) {
    spec_.log->Line(spec_.name, instance, stream, text);
  } else {
    spdlog::debug("[exec {} {}] {}: {}", spec_.name, instance, stream == LogStream::kStderr ? "stderr" : "watchdog",
                  text);
  }
}

Status<void> ExecFunction::Invoke(const store::Request& request, store::Response& response,
                                  std::string_view instance) const {
  response.Clear();
  if (!sched::InRuntime()) {
    return MakeError(ErrorCode::kInternal, fmt::format("exec function {}: Invoke outside a runtime uthread", spec_.name));
  }
  std::shared_ptr<junction::net::CorePoller> poller = ThisCorePoller();
  if (poller == nullptr) {
    return MakeError(ErrorCode::kIo, fmt::format("exec function {}: cannot start the child epoll set on core {}",
                                                 spec_.name, sched::CurrentCore()));
  }
  const auto t0 = sched::Clock::now();

  // A private temp dir, the child's cwd, HOME and TMPDIR.
  std::string tmp = fmt::format("{}/{}-XXXXXX", spec_.tmp_root, spec_.name);
  if (mkdtemp(tmp.data()) == nullptr) {
    return std::unexpected(junction::Error::FromErrno(fmt::format("exec function {}: mkdtemp {}", spec_.name, tmp)));
  }
  struct TmpDir {
    std::string path;
    ~TmpDir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } tmp_dir{tmp};
  if (credentials_.change && chown(tmp.c_str(), credentials_.uid, credentials_.gid) != 0) {
    return std::unexpected(junction::Error::FromErrno(fmt::format("exec function {}: chown {}", spec_.name, tmp)));
  }

  std::vector<std::string> env;
  env.reserve(spec_.env.size() + request.headers.size() + 10);
  env.push_back(fmt::format("PATH={}", kDefaultPath));
  env.push_back("HOME=" + tmp);
  env.push_back("TMPDIR=" + tmp);
  env.push_back("fprocess=" + spec_.fprocess);
  if (!spec_.secrets_dir.empty()) env.push_back("FAASNODE_SECRETS_DIR=" + spec_.secrets_dir);
  for (const auto& [k, v] : spec_.env) env.push_back(k + "=" + v);  // later wins in getenv: after PATH
  AppendHttpEnv(request, env);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : argv_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  Log(instance, LogStream::kWatchdog, "Forking fprocess.");
  SpawnSpec ss{.path = program_.c_str(), .argv = argv.data(), .envp = envp.data(), .cwd = tmp.c_str(),
               .credentials = credentials_, .limits = spec_.limits};
  auto spawned = ChildProcess::Spawn(ss);
  if (!spawned) {
    return MakeError(spawned.error().code(), fmt::format("function {}: {}", spec_.name, spawned.error().message()));
  }
  ChildProcess& child = *spawned;

  auto* watch = new ChildWatch;  // retired to the poller below, never deleted here
  std::vector<int> registered;
  auto add = [&](int fd, std::uint32_t events) {
    if (auto s = poller->Add(fd, events, watch); s) registered.push_back(fd);
    return fd;
  };
  add(child.stdin_fd(), EPOLLOUT);
  add(child.stdout_fd(), EPOLLIN | EPOLLRDHUP);
  add(child.stderr_fd(), EPOLLIN | EPOLLRDHUP);
  add(child.pidfd(), EPOLLIN);
  if (registered.size() != 4) {
    for (int fd : registered) poller->Remove(fd);
    poller->Retire(watch);
    return MakeError(ErrorCode::kIo, fmt::format("function {}: cannot watch the child's fds", spec_.name));
  }

  sched::Deadline deadline = request.deadline;
  if (spec_.exec_timeout.count() > 0) deadline = std::min(deadline, t0 + spec_.exec_timeout);
  std::size_t written = 0;
  bool out_open = true, err_open = true, exited = false, timed_out = false, overflow = false, killed = false;
  std::string err_text, err_partial, chunk;
  chunk.resize(kReadChunk);
  std::string& body = response.body;

  auto drain = [&](int fd, bool is_stdout) {
    for (;;) {
      ssize_t n;
      if (is_stdout) {
        const std::size_t old = body.size();
        body.resize(old + kReadChunk);
        n = read(fd, body.data() + old, kReadChunk);
        body.resize(old + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
      } else {
        n = read(fd, chunk.data(), chunk.size());
        if (n > 0) {
          const std::string_view data(chunk.data(), static_cast<std::size_t>(n));
          if (spec_.combine_output) body.append(data);
          if (err_text.size() < kErrorTextBytes) err_text.append(data.substr(0, kErrorTextBytes - err_text.size()));
          SplitLines(data, err_partial, [&](std::string_view line) { Log(instance, LogStream::kStderr, line); });
        }
      }
      if (n > 0) {
        if (body.size() > spec_.max_output_bytes) {
          overflow = true;
          return false;  // stop reading; the group is killed below
        }
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      return false;  // EOF or an error: this stream is done
    }
  };

  for (;;) {
    const std::uint64_t seen = watch->waiter.epoch();
    if (child.stdin_fd() >= 0) {
      while (written < request.body.size()) {
        const ssize_t n = write(child.stdin_fd(), request.body.data() + written,
                                std::min<std::size_t>(request.body.size() - written, 64 * 1024));
        if (n > 0) {
          written += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
          break;
        } else {
          written = request.body.size();  // EPIPE: the child does not read its stdin; fine
        }
      }
      if (written == request.body.size()) {
        poller->Remove(child.stdin_fd());
        child.CloseStdin();
      }
    }
    if (out_open) out_open = drain(child.stdout_fd(), true);
    if (err_open) err_open = drain(child.stderr_fd(), false);
    if (overflow && !killed) {
      child.KillGroup();
      killed = true;
      out_open = err_open = false;
    }
    if (!exited && child.Exited()) {
      exited = true;
      // Whatever it left running in its group (holding our pipes, or not) goes with it.
      child.KillGroup();
    }
    if (exited && !out_open && !err_open) break;
    if (killed && exited) break;
    const auto w = watch->waiter.Wait(seen, deadline);
    if (w == junction::net::IoWaiter::kTimedOut) {
      if (killed) break;  // the grace after SIGKILL ran out too: the destructor reaps it
      timed_out = !overflow;
      child.KillGroup();
      killed = true;
      deadline = sched::Clock::now() + kKillGrace;
    }
  }
  if (!err_partial.empty()) Log(instance, LogStream::kStderr, err_partial);
  for (int fd : {child.stdin_fd(), child.stdout_fd(), child.stderr_fd(), child.pidfd()}) {
    if (fd >= 0) poller->Remove(fd);
  }
  poller->Retire(watch);
  const std::optional<int> status = exited ? child.Reap() : std::nullopt;
  const double seconds = std::chrono::duration<double>(sched::Clock::now() - t0).count();

  if (timed_out) {
    response.Clear();
    response.status = 408;
    response.body = fmt::format("function {}: {} did not finish within its exec_timeout ({} ms); it was killed "
                                "with its whole process group. Raise exec_timeout or send less work.\n",
                                spec_.name, spec_.fprocess, spec_.exec_timeout.count());
  } else if (overflow) {
    response.Clear();
    response.status = 500;
    response.body = fmt::format("function {}: {} wrote more than {} bytes of output (max_output_bytes); it was "
                                "killed\n", spec_.name, spec_.fprocess, spec_.max_output_bytes);
  } else if (!status.has_value() || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    const std::string how = status ? DescribeWaitStatus(*status) : std::string("no exit status");
    std::string text = spec_.combine_output ? std::move(body) : std::move(err_text);
    response.Clear();
    response.status = 500;
    response.body = fmt::format("function {}: {} exited with {}\n{}", spec_.name, spec_.fprocess, how, text);
  } else {
    std::string ct = EnvValue(spec_.env, "content_type", "");
    if (ct.empty()) {
      for (const auto& h : request.headers) {
        if (CanonicalHeaderName(h.name) == "Content-Type") {
          ct = std::string(h.value);
          break;
        }
      }
    }
    if (!ct.empty()) response.headers.emplace_back("Content-Type", std::move(ct));
  }
  Log(instance, LogStream::kWatchdog,
      fmt::format("Wrote {} Bytes - Duration: {:.6f} seconds", response.body.size(), seconds));
  return {};
}

}  // namespace faasnode::exec
