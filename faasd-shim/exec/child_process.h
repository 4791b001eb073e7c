// child_process.h — one sandboxed child process of an exec function: spawned with pipes and a
// pidfd, in its own process group, unprivileged, with rlimits; killed as a group.
//
//   auto child = ChildProcess::Spawn(spec);          // blocks the kthread for the clone only
//   write(child->stdin_fd(), ...); read(child->stdout_fd(), ...);   // non-blocking fds
//   if (child->Exited()) { child->KillGroup(); int st = *child->Reap(); }
//
// Spawn clones with CLONE_VM | CLONE_VFORK | CLONE_PIDFD (as posix_spawn does: no page-table
// copy of the node, the calling kthread waits only until the child has exec'd). The child,
// before execve: default signal dispositions and an empty mask; its own process group
// (setpgid(0, 0)); fds 0/1/2 are the pipes and every other fd is closed; the rlimits of
// `limits` (and no core dumps); no_new_privs; when `credentials.change`, supplementary groups
// dropped and then real/effective/saved gid and uid set; PR_SET_PDEATHSIG(SIGKILL) (it dies with
// the node); chdir(cwd). A failure in any step is reported by Spawn as an error naming the step.
//
// Threads: a ChildProcess is owned by one uthread at a time. The destructor kills the group and
// reaps the child if that has not happened (blocking briefly: only on error paths).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "junction/base/error.h"

namespace faasnode::exec {

// Resource limits of one child (setrlimit); 0 leaves the node's own limit in place.
struct Limits {
  std::uint64_t memory_bytes = std::uint64_t{256} << 20;  // RLIMIT_AS: its whole address space
  std::uint64_t cpu_seconds = 0;                          // RLIMIT_CPU (SIGKILL past it)
  std::uint64_t open_files = 256;                         // RLIMIT_NOFILE
  std::uint64_t file_size_bytes = 0;                      // RLIMIT_FSIZE: largest file it writes
  std::uint64_t processes = 0;  // RLIMIT_NPROC: counts every process of the child's *user*
};

struct Credentials {
  bool change = false;  // false: keep the node's (only when the node is not root)
  uid_t uid = 0;
  gid_t gid = 0;
};

struct SpawnSpec {
  const char* path = nullptr;          // absolute path of the program
  char* const* argv = nullptr;         // NULL-terminated
  char* const* envp = nullptr;         // NULL-terminated
  const char* cwd = nullptr;           // working directory; nullptr: the node's
  Credentials credentials;
  Limits limits;
};

class ChildProcess {
 public:
  // Errors: kIo (pipe, clone), kPermissionDenied / kNotFound / kIo for a step of the child's
  // set-up or its execve, with the step and errno in the message.
  [[nodiscard]] static junction::Status<ChildProcess> Spawn(const SpawnSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_; }        // readable once the child has exited
  int stdin_fd() const { return stdin_fd_; }  // the write end of its stdin; -1 once closed
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  void CloseStdin();

  // Non-blocking: whether the child has exited (it stays a zombie until Reap, so its pid and
  // process group id cannot be reused meanwhile).
  bool Exited() const;
  // SIGKILL to the whole process group. Safe until Reap (the group id is still reserved).
  void KillGroup();
  // Reaps an exited child: its wait status (as waitpid's). nullopt if it has not exited yet.
  std::optional<int> Reap();

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int pidfd_ = -1, stdin_fd_ = -1, stdout_fd_ = -1, stderr_fd_ = -1;
  bool reaped_ = true;
};

// "exit status 3", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int status);

}  // namespace faasnode::exec
