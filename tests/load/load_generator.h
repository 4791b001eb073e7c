// load_generator.h — faasload's engine: open- or closed-loop HTTP/1.1 load over a net::Stack.
//
//   LoadOptions o;  o.target = *Endpoint::Parse("127.0.0.1:8080");
//   o.kinds = {{.weight = 1, .method = Method::kPost, .target = "/function/echo", .body = "hi"}};
//   o.rate_rps = 1000;  o.duration = 1s;
//   auto result = RunLoadInRuntime(o);   // creates the runtime and the stack, runs, tears down
//
// Open loop (rate_rps > 0): request i is scheduled at t0 + i/rate; it is sent on the first
// connection that is free at or after that time (waiting on the client side while every
// connection is busy), and its latency counts from the scheduled time (no coordinated
// omission). Its service time (write to complete response) is kept apart. Closed loop
// (rate_rps == 0): every connection sends its next request when the previous one is answered.
// Requests scheduled (open) or started (closed) before t0 + warmup are not counted. The run
// ends when the schedule passes t0 + warmup + duration or max_requests counted requests were
// started, and every request in flight has finished (or timed out).
//
// Threading: RunLoad runs from a uthread inside a running Runtime; it spawns one uthread per
// connection across the runtime's cores, and blocks (parks) until the run ends. No allocation
// per request once connections are up (a reconnect allocates).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "junction/base/error.h"
#include "junction/http/method.h"
#include "junction/net/endpoint.h"
#include "junction/net/stack.h"
#include "tests/load/histogram.h"

namespace faasload {

// One kind of request of the mix.
struct RequestKind {
  std::uint32_t weight = 1;
  junction::http::Method method = junction::http::Method::kGet;
  std::string target = "/";  // path and query
  std::string body;
};

struct LoadOptions {
  junction::net::Endpoint target;
  std::string host_header;                  // Host: value; empty: target's "ip:port"
  std::vector<RequestKind> kinds;           // at least one
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, every request
  double rate_rps = 0;                      // > 0: open loop; 0: closed loop
  int connections = 32;
  std::chrono::nanoseconds duration = std::chrono::seconds(10);
  std::uint64_t max_requests = 0;           // counted requests; 0: no bound
  std::chrono::nanoseconds warmup = std::chrono::seconds(2);
  std::chrono::nanoseconds timeout = std::chrono::seconds(5);
  int cores = 1;                            // runtime cores (RunLoadInRuntime)
  std::string backend = "kernel";
  junction::net::StackOptions stack_options;  // dpdk: eal args, ip, gateway
  bool progress = false;                    // one line per second on stderr
};

struct ErrorCounts {
  std::uint64_t connect = 0;
  std::uint64_t timeout = 0;
  std::uint64_t io = 0;
  std::uint64_t http_4xx = 0;
  std::uint64_t http_5xx = 0;
  std::uint64_t parse = 0;
  std::uint64_t total() const { return connect + timeout + io + http_4xx + http_5xx + parse; }
};

struct LoadResult {
  bool open_loop = false;
  double offered_rps = 0;
  int connections = 0;
  double duration_s = 0;     // from the end of the warm-up to the last counted completion
  std::uint64_t requests = 0;  // counted requests that finished (ok or error)
  std::uint64_t ok = 0;        // 2xx
  std::uint64_t sent = 0;      // every request written, warm-up included
  ErrorCounts errors;
  // ns; latency: corrected (from the scheduled time) in open loop, = service in closed loop.
  std::unique_ptr<Histogram> latency = std::make_unique<Histogram>();
  std::unique_ptr<Histogram> service = std::make_unique<Histogram>();
  double throughput_rps() const { return duration_s > 0 ? ok / duration_s : 0; }
};

// Checks options (kInvalidArgument with what to change).
junction::Status<void> ValidateLoadOptions(const LoadOptions& options);

// Runs the load over `stack` from a uthread of a running Runtime (see above).
// Errors: invalid options; kUnavailable when no connection could be made at all.
junction::Status<LoadResult> RunLoad(const LoadOptions& options, junction::net::Stack& stack);

// Creates a Runtime on options.cores cores and the options.backend stack, runs RunLoad,
// tears both down. From a plain thread (not inside a Runtime). Registers the dpdk stack
// when built with it.
junction::Status<LoadResult> RunLoadInRuntime(const LoadOptions& options);

}  // namespace faasload
