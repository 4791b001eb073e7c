// instance.h — one instance of a native function: the host side of the SDK's C ABI.
//
// Init once with its environment, Invoke per request, fini on destruction.
//
//   auto fn = store.Load("echo");                               // FunctionStore, cached
//   auto inst = Instance::Create(*fn, FunctionEnv{}, {});       // calls the function's init
//   Response resp;                                              // reuse across calls
//   Status<void> s = inst->Invoke({.method = "POST", .body = body}, resp);
//   if (!s) answer 500 with s.error().message(); else write resp.
//
// Threads: Create and the destructor may run on a uthread or a plain thread; init and fini run
// there. Invoke is const and reentrant: it may run on several uthreads (on any cores) at once
// for one Instance — whether the *function* tolerates that is the function's contract
// (function_abi.h, Threads); the instances layer decides how many requests an instance takes.
// Invoke runs the handler on the calling uthread; it blocks exactly when the handler waits
// through the host (sleep_ns, yield), which parks the uthread (SleepFor / Yield of
// junction/sched) when called on one, and blocks the thread otherwise; an outbound HTTP call
// (http_request, with InstanceOptions::http) parks the uthread and is refused on a plain thread.
//
// Lifetimes: a Request's views must stay valid for the Invoke call. The Instance keeps its
// NativeFunction loaded (shared_ptr) and owns its environment, which the function may keep
// views of until fini. Destroying an Instance while an Invoke on it runs is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "faasd-shim/store/native_function.h"
#include "junction/base/error.h"
#include "junction/sched/tsc.h"

namespace junction::http {
class Client;
}

namespace faasnode::store {

// A header field of a request, as views (e.g. into the HTTP parser's buffer).
struct Header {
  std::string_view name;
  std::string_view value;
};

// A deployment's envVars and secrets (name, value), in its order. Owned by the Instance.
struct FunctionEnv {
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<std::pair<std::string, std::string>> secrets;
};

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// One line a function wrote to its log stream. Views valid for the sink call only.
struct LogRecord {
  std::string_view function;
  std::uint64_t call_id = 0;  // the Request's call_id; 0 for lines from init and fini
  LogLevel level = LogLevel::kInfo;
  std::string_view message;
};
// Called on the function's uthread, synchronously: it must not block (hand lines to a queue).
using LogSink = std::function<void(const LogRecord&)>;

struct InstanceOptions {
  // Where the function's log lines go; empty: one line each on stderr.
  LogSink log;
  // The most body bytes a response may carry; a function that writes more fails the call.
  std::size_t max_response_body_bytes = std::size_t{64} << 20;
  // The client a function's outbound calls go through (ABI v3 http_request), shared by every
  // instance; it must outlive them. Null: http_request answers FAASNODE_ERR_UNAVAILABLE.
  junction::http::Client* http = nullptr;
};

// One invocation, as views that stay valid for the Invoke call.
struct Request {
  std::string_view method = "GET";
  std::string_view path;   // after /function/NAME: "" or "/..."
  std::string_view query;  // raw, without '?'
  std::span<const Header> headers;
  std::string_view body;
  junction::sched::Deadline deadline = junction::sched::Deadline::max();  // max(): none
  std::uint64_t call_id = 0;  // the node's invocation id, for logs
};

// Energy a function measured itself and reported for its invocation (ABI v2, report_energy):
// zones the node cannot attribute from its own counters. The biller adds it to the ledger row.
enum class MeasuredZone { kGpu };
enum class MeasuredSource { kNvml };
struct MeasuredEnergy {
  MeasuredZone zone = MeasuredZone::kGpu;
  MeasuredSource source = MeasuredSource::kNvml;
  double joules = 0.0;  // finite, >= 0
};

// What the function answered. Reuse one across calls: Clear() keeps the capacity.
struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // checked when the reply is written
  // Lines in wire form ("Name: value\r\n", junction::http::AppendHeaderLine) that the host's
  // add_header has already checked (an RFC 9110 token name, no CR/LF/NUL in the value, not a
  // framing field): a native function's headers, written after `headers` with no second check
  // or per-header allocation.
  std::string header_lines;
  std::string body;
  std::vector<MeasuredEnergy> energy;  // in the order reported; empty for most functions

  void Clear() {
    status = 200;
    headers.clear();
    header_lines.clear();
    body.clear();
    energy.clear();
  }

  // `headers` then the pairs of `header_lines`, in the order they go on the wire (for tests
  // and for callers that want pairs; allocates).
  std::vector<std::pair<std::string, std::string>> AllHeaders() const;
};

// What the instances layer runs requests on: a native Instance (below) or an exec one
// (faasd-shim/exec). Invoke has Instance::Invoke's contract: fills `response` (cleared first),
// or returns an error naming the function, for a 500 with its message. Implementations are
// reentrant (several uthreads may Invoke one at once) and must not block their kthread.
class FunctionInstance {
 public:
  virtual ~FunctionInstance() = default;
  [[nodiscard]] virtual junction::Status<void> Invoke(const Request& request,
                                                      Response& response) const = 0;
  virtual std::string_view name() const = 0;
};

class Instance final : public FunctionInstance {
 public:
  // Calls the function's init once with `env`. Errors: kUnavailable when init returns non-zero
  // (the function's log says why; the error names the function and the code).
  [[nodiscard]] static junction::Status<Instance> Create(std::shared_ptr<const NativeFunction> fn,
                                                         FunctionEnv env,
                                                         InstanceOptions options = {});

  Instance(Instance&& other) noexcept;
  Instance& operator=(Instance&& other) noexcept;
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  // Calls fini once (not for a moved-from Instance).
  ~Instance() override;

  // Runs the handler for `request` and fills `response` (cleared first). Errors, each naming
  // the function, with `response` cleared — answer 500 with the message:
  //   kInternal          the handler returned non-zero (or, in C++, threw);
  //   kInvalidArgument   the handler set a status outside 200..599, a header whose name is not
  //                      a token or whose value has CR/LF/NUL, or a framing header
  //                      (Content-Length, Transfer-Encoding, Connection);
  //   kResourceExhausted the body passed options.max_response_body_bytes.
  [[nodiscard]] junction::Status<void> Invoke(const Request& request,
                                              Response& response) const override;

  std::string_view name() const override;
  const NativeFunction& function() const;

 private:
  struct State;
  explicit Instance(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;  // heap: the function holds pointers into it (host table, env)
};

}  // namespace faasnode::store
