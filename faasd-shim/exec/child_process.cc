// child_process.cc — clone, sandbox and reap one exec child (see child_process.h).
#include "faasd-shim/exec/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include <fmt/format.h>

namespace faasnode::exec {

using junction::Error;
using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

// Shared with the child (CLONE_VM): it writes the failed step and errno before _exit.
struct ChildArgs {
  const SpawnSpec* spec;
  int in_r, out_w, err_w;
  const char* failed_step;
  int failed_errno;
};

// Runs in the child on its own stack, sharing the node's memory while the parent kthread waits
// (CLONE_VFORK): only system calls, no allocation, no locks. setuid/setgid/setgroups are raw
// syscalls because glibc's wrappers signal every thread of the process to change theirs.
int ChildMain(void* p) {
  auto* a = static_cast<ChildArgs*>(p);
  const SpawnSpec& s = *a->spec;
  auto fail = [a](const char* step) {
    a->failed_step = step;
    a->failed_errno = errno;
    _exit(127);
  };
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) (void)sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail("sigprocmask");
  if (setpgid(0, 0) != 0) fail("setpgid");
  if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 || dup2(a->err_w, 2) < 0) fail("dup2");
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) fail("close_range");
  auto limit = [&](int resource, std::uint64_t v, const char* step) {
    if (v == 0) return;
    rlimit rl{static_cast<rlim_t>(v), static_cast<rlim_t>(v)};
    if (setrlimit(resource, &rl) != 0) fail(step);
  };
  limit(RLIMIT_AS, s.limits.memory_bytes, "setrlimit(RLIMIT_AS)");
  limit(RLIMIT_CPU, s.limits.cpu_seconds, "setrlimit(RLIMIT_CPU)");
  limit(RLIMIT_NOFILE, s.limits.open_files, "setrlimit(RLIMIT_NOFILE)");
  limit(RLIMIT_FSIZE, s.limits.file_size_bytes, "setrlimit(RLIMIT_FSIZE)");
  limit(RLIMIT_NPROC, s.limits.processes, "setrlimit(RLIMIT_NPROC)");
  rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) fail("setrlimit(RLIMIT_CORE)");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
  if (s.credentials.change) {
    const gid_t g = s.credentials.gid;
    const uid_t u = s.credentials.uid;
    if (syscall(SYS_setgroups, 0, nullptr) != 0) fail("setgroups");
    if (syscall(SYS_setresgid, g, g, g) != 0) fail("setresgid");
    if (syscall(SYS_setresuid, u, u, u) != 0) fail("setresuid");
  }
  // After the credential change, which clears it.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("prctl(PR_SET_PDEATHSIG)");
  if (s.cwd != nullptr && chdir(s.cwd) != 0) fail("chdir");
  execve(s.path, s.argv, s.envp);
  fail("execve");
  return 127;
}

constexpr std::size_t kChildStackBytes = 64 * 1024;

}  // namespace

Status<ChildProcess> ChildProcess::Spawn(const SpawnSpec& spec) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return std::unexpected(Error::FromErrno("exec: pipe2 for stdin"));
  if (pipe2(out, O_CLOEXEC) != 0) {
    const int e = errno;
    close(in[0]), close(in[1]);
    return std::unexpected(Error::FromErrno("exec: pipe2 for stdout", e));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return std::unexpected(Error::FromErrno("exec: pipe2 for stderr", e));
  }
  ChildProcess c;
  c.stdin_fd_ = in[1];
  c.stdout_fd_ = out[0];
  c.stderr_fd_ = err[0];
  for (int fd : {in[1], out[0], err[0]}) (void)fcntl(fd, F_SETFL, O_NONBLOCK);

  ChildArgs args{&spec, in[0], out[1], err[1], nullptr, 0};
  std::unique_ptr<char[]> stack(new char[kChildStackBytes]);
  // No signal handler of the node may run on the child's stack (it shares our memory).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int pidfd = -1;
  const pid_t pid = clone(&ChildMain, stack.get() + kChildStackBytes,
                          CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &args, &pidfd);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close(in[0]), close(out[1]), close(err[1]);
  if (pid < 0) return std::unexpected(Error::FromErrno("exec: clone", clone_errno));
  c.pid_ = pid;
  c.pidfd_ = pidfd;
  c.reaped_ = false;
  if (args.failed_step != nullptr) {
    (void)c.Reap();  // it has _exit'ed already (vfork: we resume after its exec or exit)
    const int e = args.failed_errno;
    const ErrorCode code = e == ENOENT ? ErrorCode::kNotFound
                           : (e == EPERM || e == EACCES) ? ErrorCode::kPermissionDenied
                                                         : ErrorCode::kIo;
    return std::unexpected(Error(code, fmt::format("exec: starting {} failed at {}: {}", spec.path,
                                                   args.failed_step, strerror(e)), e));
  }
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(o.pid_), pidfd_(o.pidfd_), stdin_fd_(o.stdin_fd_), stdout_fd_(o.stdout_fd_),
      stderr_fd_(o.stderr_fd_), reaped_(o.reaped_) {
  o.pid_ = -1;
  o.pidfd_ = o.stdin_fd_ = o.stdout_fd_ = o.stderr_fd_ = -1;
  o.reaped_ = true;
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    KillGroup();
    siginfo_t info{};
    while (waitid(P_PIDFD, static_cast<id_t>(pidfd_), &info, WEXITED) != 0 && errno == EINTR) {
    }
  }
  for (int fd : {pidfd_, stdin_fd_, stdout_fd_, stderr_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

bool ChildProcess::Exited() const {
  if (reaped_) return true;
  siginfo_t info{};
  if (waitid(P_PIDFD, static_cast<id_t>(pidfd_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid != 0;
}

void ChildProcess::KillGroup() {
  if (!reaped_ && pid_ > 0) (void)kill(-pid_, SIGKILL);
}

std::optional<int> ChildProcess::Reap() {
  if (reaped_) return std::nullopt;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG | __WALL);
  if (r != pid_) return std::nullopt;
  reaped_ = true;
  return status;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  return fmt::format("wait status {:#x}", status);
}

}  // namespace faasnode::exec
