// exec_function.h — an exec function with the classic OpenFaaS watchdog's semantics: one
// sandboxed process per request running `fprocess`.
//
//   ExecSpec spec{.name = "wc", .fprocess = "wc -l"};
//   auto fn = ExecFunction::Create(std::move(spec));        // resolves the program and the user
//   deployment.factory = [fn = *fn] { return fn->NewInstance(); };   // pooled like a native one
//
// Per request (Invoke): fprocess split on spaces (no shell) runs as `user` (see below) with the
// request body on its stdin and answers with its stdout (its stderr appended as it arrives
// when combine_output). Its environment: PATH, HOME and TMPDIR (a private temp dir), the
// spec's env, FAASNODE_SECRETS_DIR when a secrets dir is set, and the Http_* variables of
// http_env.h. Outcomes, as responses (the pool counts them as served):
//   exit 0                 200, the output; Content-Type: env "content_type", else the request's
//   exit != 0 or a signal  500, "function NAME: PROGRAM exited with exit status N" and its stderr
//   exec_timeout passed    408, and the child's whole process group is killed (SIGKILL)
//   output past max_output_bytes   500, the group killed
// Errors (kInternal, kIo: a 500 from the pool) only when the child cannot be started.
//
// Children never run as root: with the node as root they run as `user` (default "nobody";
// root is refused), with no_new_privs, in their own process group, under `limits`, in a fresh
// temp dir (mode 0700, owned by the user, removed after the call) under tmp_root (mode 0711,
// so other children cannot list it). A node that is not root cannot switch users: children run
// as the node's own (unprivileged) user, and Create logs that once.
//
// Create sets SIGPIPE to SIG_IGN process-wide (once): a child that does not read its stdin
// makes the node's write fail with EPIPE, and that must not kill the node.
//
// Blocking: Invoke never blocks its core while the child runs: the pipes and the child's pidfd
// are non-blocking fds registered with a per-core epoll set that the core's idle loop and poll
// hook drain (junction/net's CorePoller), and the uthread parks on them. The clone itself blocks
// the kthread until the child has exec'd (CLONE_VFORK). Invoke must run on a runtime uthread.
// Threads: an ExecFunction is immutable after Create; Invoke may run on any number of uthreads
// at once (the pool's max_inflight bounds them).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "faasd-shim/exec/child_process.h"
#include "faasd-shim/exec/log_sink.h"
#include "faasd-shim/store/instance.h"
#include "junction/base/error.h"

namespace faasnode::exec {

struct ExecSpec {
  std::string name;       // the deployment's name (/function/NAME)
  std::string fprocess;   // "PROGRAM ARG ...", split on spaces; PROGRAM is looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // the deployment's envVars
  std::string secrets_dir;  // given to the child as FAASNODE_SECRETS_DIR; "" for none
  Limits limits;
  std::chrono::milliseconds exec_timeout{10'000};  // 0: none (the request's deadline only)
  bool combine_output = true;                      // the classic watchdog's default
  std::size_t max_output_bytes = std::size_t{64} << 20;
  std::string user = "nobody";                 // who children run as when the node is root
  std::string tmp_root = "/tmp/faasnode-exec";  // parent of the per-call temp dirs
  std::shared_ptr<LogSink> log;                 // nullptr: spdlog at debug level
};

class ExecFunction : public std::enable_shared_from_this<ExecFunction> {
 public:
  // Checks and resolves the spec. Errors (kInvalidArgument, naming the function and the field):
  // an empty or non-token name, an empty fprocess, a program not found in PATH or not
  // executable, an unknown user or one that is root, a secrets dir that does not exist, a
  // tmp_root that cannot be created. Blocks briefly (file system look-ups): deploy time only.
  [[nodiscard]] static junction::Status<std::shared_ptr<ExecFunction>> Create(ExecSpec spec);

  // A pool instance of this function ("NAME-1", "NAME-2", ...). Instances share the function.
  [[nodiscard]] junction::Status<std::unique_ptr<store::FunctionInstance>> NewInstance() const;

  // Runs one child for `request` (see above). `instance` names the caller in log lines.
  [[nodiscard]] junction::Status<void> Invoke(const store::Request& request, store::Response& response,
                                              std::string_view instance) const;

  const ExecSpec& spec() const { return spec_; }
  const std::string& program() const { return program_; }  // the resolved absolute path
  const Credentials& credentials() const { return credentials_; }

  ExecFunction(ExecSpec spec, std::string program, std::vector<std::string> argv,
               Credentials credentials);

 private:
  void Log(std::string_view instance, LogStream stream, std::string_view text) const;

  const ExecSpec spec_;
  const std::string program_;
  const std::vector<std::string> argv_;
  const Credentials credentials_;
  mutable std::atomic<std::uint64_t> instances_{0};
};

}  // namespace faasnode::exec
