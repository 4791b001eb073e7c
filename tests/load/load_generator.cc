// load_generator.cc — the open/closed-loop engine: connection uthreads, schedule, per-core stats.
#include "tests/load/load_generator.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <span>

#include "junction/http/request_writer.h"
#include "junction/http/response_parser.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"

#ifdef FAASNODE_HAVE_DPDK
#include "junction/net/dpdk/dpdk_stack.h"
#endif

namespace faasload {

namespace {

using junction::Error;
using junction::ErrorCode;
using junction::Status;
using junction::http::Method;
using junction::http::Response;
using junction::http::ResponseParser;
using junction::net::TcpConn;
using junction::sched::Clock;
using junction::sched::Deadline;
namespace sched = junction::sched;

// What each core counts: written by the uthreads running on that core only (one writer at a
// time: a core runs one uthread at a time and nothing here yields), read by the progress
// uthread and at the end.
struct alignas(64) CoreStats {
  Histogram latency;
  Histogram service;
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> connect{0};
  std::atomic<std::uint64_t> timeout{0};
  std::atomic<std::uint64_t> io{0};
  std::atomic<std::uint64_t> http_4xx{0};
  std::atomic<std::uint64_t> http_5xx{0};
  std::atomic<std::uint64_t> parse{0};
  std::atomic<std::int64_t> last_done_ns{0};
};

void Bump(std::atomic<std::uint64_t>& a) {
  a.store(a.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::int64_t Ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

struct Wire {
  Method method = Method::kGet;
  std::string bytes;
};

// The state one run shares between its uthreads.
struct Run {
  Run(const LoadOptions& o, junction::net::Stack& s) : options(o), stack(s) {}
  const LoadOptions& options;
  junction::net::Stack& stack;
  std::vector<Wire> wires;             // serialized request per kind
  std::vector<std::uint16_t> sequence;  // kind per request index, repeating
  std::vector<std::unique_ptr<CoreStats>> cores;
  Clock::time_point t0, measure_start, end;
  std::uint64_t first_counted = 0;  // open loop: first counted request index
  std::atomic<std::uint64_t> next_index{0};
  std::atomic<std::uint64_t> closed_counted{0};
  std::atomic<bool> done{false};
  sched::WaitGroup ready;  // every worker counts itself ready, then waits for the gate
  sched::WaitGroup gate;   // opened (Done) once t0 is set

  CoreStats& here() { return *cores[static_cast<std::size_t>(std::max(0, sched::CurrentCore()))]; }
};

// Weighted round robin, smooth (every kind spread through the cycle), deterministic.
std::vector<std::uint16_t> BuildSequence(const std::vector<RequestKind>& kinds) {
  std::uint64_t total = 0;
  for (const auto& k : kinds) total += k.weight;
  std::vector<std::int64_t> current(kinds.size(), 0);
  std::vector<std::uint16_t> seq;
  seq.reserve(total);
  for (std::uint64_t n = 0; n < total; ++n) {
    std::size_t best = 0;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      current[k] += kinds[k].weight;
      if (current[k] > current[best]) best = k;
    }
    current[best] -= static_cast<std::int64_t>(total);
    seq.push_back(static_cast<std::uint16_t>(best));
  }
  return seq;
}

// One connection and its parser; reconnects after errors.
class Worker {
 public:
  Worker(Run& run, TcpConn conn) : run_(run), conn_(std::move(conn)) {
    // The response buffer's pages mapped now, not by the first response inside the window.
    std::span<char> space = parser_.WritableSpace(kReadSpace);
    std::fill(space.begin(), space.end(), '\0');
  }

  void Loop() {
    run_.ready.Done();
    run_.gate.Wait();
    if (run_.options.rate_rps > 0) {
      OpenLoop();
    } else {
      ClosedLoop();
    }
    conn_.Close();
  }

 private:
  static constexpr std::size_t kReadSpace = 16 * 1024;

  void OpenLoop() {
    const double ns_per_request = 1e9 / run_.options.rate_rps;
    const std::uint64_t max = run_.options.max_requests;
    for (;;) {
      const std::uint64_t i = run_.next_index.fetch_add(1, std::memory_order_relaxed);
      const Clock::time_point scheduled =
          run_.t0 + std::chrono::nanoseconds(static_cast<std::int64_t>(i * ns_per_request));
      if (scheduled >= run_.end) return;
      if (max != 0 && i >= run_.first_counted + max) return;
      if (scheduled > Clock::now()) sched::SleepUntil(scheduled);
      Issue(run_.sequence[i % run_.sequence.size()], scheduled, i >= run_.first_counted);
    }
  }

  void ClosedLoop() {
    const std::uint64_t max = run_.options.max_requests;
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (now >= run_.end) return;
      const bool counted = now >= run_.measure_start;
      if (counted && max != 0 && run_.closed_counted.fetch_add(1) >= max) return;
      const std::uint64_t i = run_.next_index.fetch_add(1, std::memory_order_relaxed);
      Issue(run_.sequence[i % run_.sequence.size()], now, counted);
    }
  }

  void Reset() {
    conn_.Close();
    parser_ = ResponseParser();
  }

  // Sends request kind `k` (scheduled at `scheduled`), waits for its response, records it.
  void Issue(std::uint16_t k, Clock::time_point scheduled, bool counted) {
    const Wire& wire = run_.wires[k];
    if (!conn_.is_open()) {
      auto c = run_.stack.Connect(run_.options.target, Clock::now() + run_.options.timeout);
      if (!c) {
        if (counted) {
          CoreStats& s = run_.here();
          Bump(s.connect);
          Bump(s.requests);
        }
        sched::SleepFor(std::chrono::milliseconds(10));  // don't spin on a refusing server
        return;
      }
      conn_ = std::move(*c);
    }
    const Clock::time_point sent = Clock::now();
    const Deadline deadline = sent + run_.options.timeout;
    Bump(run_.here().sent);
    parser_.ExpectResponseTo(wire.method);
    if (!conn_.Write(std::as_bytes(std::span(wire.bytes)), deadline)) {
      Fail(counted, &CoreStats::io);
      return;
    }
    for (;;) {
      Status<const Response*> r = parser_.Next();
      if (r && *r == nullptr) {
        std::span<char> space = parser_.WritableSpace(kReadSpace);
        auto n = conn_.Read(std::as_writable_bytes(space), deadline);
        if (!n) {
          Fail(counted, n.error().code() == ErrorCode::kTimedOut ? &CoreStats::timeout
                                                                  : &CoreStats::io);
          return;
        }
        if (*n == 0) {
          r = parser_.FinishAtEof();
          if (r && *r == nullptr) {
            Fail(counted, &CoreStats::io);  // closed before a response came
            return;
          }
        } else {
          parser_.Commit(*n);
          continue;
        }
      }
      if (!r) {
        Fail(counted, &CoreStats::parse);
        return;
      }
      if ((*r)->is_interim()) continue;
      const int status = (*r)->status;
      const bool keep_alive = (*r)->keep_alive;
      const Clock::time_point done = Clock::now();
      if (counted) {
        CoreStats& s = run_.here();
        s.latency.Record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, Ns(done) - Ns(scheduled))));
        s.service.Record(static_cast<std::uint64_t>(Ns(done) - Ns(sent)));
        Bump(s.requests);
        if (status >= 200 && status < 300) {
          Bump(s.ok);
        } else if (status >= 400 && status < 500) {
          Bump(s.http_4xx);
        } else if (status >= 500 && status < 600) {
          Bump(s.http_5xx);
        } else {
          Bump(s.parse);
        }
        if (Ns(done) > s.last_done_ns.load(std::memory_order_relaxed)) {
          s.last_done_ns.store(Ns(done), std::memory_order_relaxed);
        }
      }
      if (!keep_alive) Reset();
      return;
    }
  }

  void Fail(bool counted, std::atomic<std::uint64_t> CoreStats::*kind) {
    if (counted) {
      CoreStats& s = run_.here();
      Bump(s.*kind);
      Bump(s.requests);
      const std::int64_t now = Ns(Clock::now());
      if (now > s.last_done_ns.load(std::memory_order_relaxed)) {
        s.last_done_ns.store(now, std::memory_order_relaxed);
      }
    }
    Reset();
  }

  Run& run_;
  TcpConn conn_;
  ResponseParser parser_;
};

std::uint64_t Sum(const Run& run, std::atomic<std::uint64_t> CoreStats::*field) {
  std::uint64_t n = 0;
  for (const auto& c : run.cores) n += ((*c).*field).load(std::memory_order_relaxed);
  return n;
}

void Progress(Run& run) {
  auto scratch = std::make_unique<Histogram>();
  Clock::time_point next = Clock::now() + std::chrono::seconds(1);
  std::uint64_t last_ok = 0;
  const Clock::time_point start = run.t0;
  while (!run.done.load(std::memory_order_acquire)) {
    sched::SleepUntil(std::min(next, Clock::now() + std::chrono::milliseconds(50)));
    if (Clock::now() < next) continue;
    next += std::chrono::seconds(1);
    scratch->Reset();
    for (const auto& c : run.cores) scratch->Merge(c->latency);
    const std::uint64_t ok = Sum(run, &CoreStats::ok);
    const std::uint64_t errors = Sum(run, &CoreStats::connect) + Sum(run, &CoreStats::timeout) +
                                 Sum(run, &CoreStats::io) + Sum(run, &CoreStats::http_4xx) +
                                 Sum(run, &CoreStats::http_5xx) + Sum(run, &CoreStats::parse);
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    fmt::print(stderr, "t={:.0f}s{} sent={} ok={} errors={} rps={} p99={:.1f}us\n", t,
               Clock::now() < run.measure_start ? " (warm-up)" : "", Sum(run, &CoreStats::sent), ok,
               errors, ok - last_ok, scratch->ValueAtPercentile(99.0) / 1e3);
    last_ok = ok;
  }
}

}  // namespace

Status<void> ValidateLoadOptions(const LoadOptions& o) {
  auto bad = [](std::string m) { return std::unexpected(Error(ErrorCode::kInvalidArgument, std::move(m))); };
  if (o.kinds.empty()) return bad("no request kinds: give --url (and --body) or a --mix file");
  for (const auto& k : o.kinds) {
    if (k.weight == 0) return bad("a request kind has weight 0: weights are positive integers");
  }
  if (o.kinds.size() > 65535) return bad("more than 65535 request kinds in the mix: merge some");
  if (o.rate_rps < 0 || !std::isfinite(o.rate_rps)) return bad("--rate must be a positive number of requests/s");
  if (o.connections < 1 || o.connections > 100000) return bad("--connections must be 1..100000");
  if (o.duration <= std::chrono::nanoseconds::zero()) return bad("--duration must be > 0");
  if (o.warmup < std::chrono::nanoseconds::zero()) return bad("--warmup must be >= 0");
  if (o.timeout <= std::chrono::nanoseconds::zero()) return bad("--timeout must be > 0");
  if (o.cores < 1) return bad("--cores must be >= 1");
  if (o.target.port == 0) return bad("the target port is 0: put a port in --url");
  return {};
}

Status<LoadResult> RunLoad(const LoadOptions& options, junction::net::Stack& stack) {
  if (auto v = ValidateLoadOptions(options); !v) return std::unexpected(v.error());
  auto* rt = sched::Runtime::Current();
  const int ncores = rt != nullptr ? rt->num_cores() : 1;
  Run run(options, stack);
  const std::string host = options.host_header.empty() ? options.target.ToString() : options.host_header;
  for (const auto& k : options.kinds) {
    Wire w;
    w.method = k.method;
    junction::http::RequestWriter writer(w.bytes);
    if (auto s = writer.Start(k.method, k.target); !s) {
      return std::unexpected(Error(ErrorCode::kInvalidArgument,
                                   fmt::format("request target '{}': {}", k.target, s.error().message())));
    }
    (void)writer.AddHeader("Host", host);
    for (const auto& [name, value] : options.headers) {
      if (auto s = writer.AddHeader(name, value); !s) {
        return std::unexpected(Error(ErrorCode::kInvalidArgument,
                                     fmt::format("header '{}': {}", name, s.error().message())));
      }
    }
    writer.Finish(k.body);
    run.wires.push_back(std::move(w));
  }
  run.sequence = BuildSequence(options.kinds);
  for (int c = 0; c < ncores; ++c) run.cores.push_back(std::make_unique<CoreStats>());

  // Connect every connection before the clock starts.
  std::vector<TcpConn> conns;
  conns.reserve(static_cast<std::size_t>(options.connections));
  Status<TcpConn> last_error = std::unexpected(Error(ErrorCode::kInternal, "none"));
  for (int i = 0; i < options.connections; ++i) {
    auto c = stack.Connect(options.target, Clock::now() + options.timeout);
    if (!c) {
      last_error = std::move(c);
      conns.emplace_back();  // the worker retries
      continue;
    }
    conns.push_back(std::move(*c));
  }
  if (std::none_of(conns.begin(), conns.end(), [](const TcpConn& c) { return c.is_open(); })) {
    return std::unexpected(Error(ErrorCode::kUnavailable,
                                 fmt::format("cannot connect to {}: {} (is the server up?)",
                                             options.target.ToString(), last_error.error().message())));
  }

  // The stack's buffers (the dpdk stack's TCP rings, a memif port's shared pages) mapped in
  // now rather than one page fault at a time inside the measured window (~11 µs each in a
  // VM: 400 of them, ~5 ms, in a 100-connection dpdk burst). Connections all start on this
  // core; at most kMaxPrimed of them (128 MiB of dpdk rings).
  constexpr std::size_t kMaxPrimed = 256;
  if (auto r = stack.PrimeConnections(
          std::min<std::size_t>(static_cast<std::size_t>(options.connections), kMaxPrimed),
          junction::net::kWholeRing);
      !r) {
    return std::unexpected(Error(ErrorCode::kUnavailable,
                                 fmt::format("readying the stack's buffers: {}", r.error().message())));
  }

  if (options.rate_rps > 0) {
    run.first_counted = static_cast<std::uint64_t>(
        std::ceil(std::chrono::duration<double>(options.warmup).count() * options.rate_rps));
  }

  // Every worker starts, readies its buffers and stack, and waits; the clock starts after.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<sched::JoinHandle> handles;
  run.ready.Add(options.connections);
  run.gate.Add(1);
  for (int i = 0; i < options.connections; ++i) {
    workers.push_back(std::make_unique<Worker>(run, std::move(conns[static_cast<std::size_t>(i)])));
    Worker* w = workers.back().get();
    auto h = sched::Spawn([w] { w->Loop(); }, sched::SpawnOptions{.core = i % ncores});
    if (!h) {
      run.t0 = run.measure_start = run.end = Clock::now();  // what already runs stops at once
      run.gate.Done();
      for (auto& hh : handles) hh.Join();
      return std::unexpected(h.error());
    }
    handles.push_back(std::move(*h));
  }
  run.ready.Wait();
  run.t0 = Clock::now() + std::chrono::milliseconds(1);
  run.measure_start = run.t0 + options.warmup;
  run.end = run.measure_start + options.duration;
  run.gate.Done();
  sched::JoinHandle progress;
  if (options.progress) {
    auto h = sched::Spawn([&run] { Progress(run); });
    if (h) progress = std::move(*h);
  }
  for (auto& h : handles) h.Join();
  run.done.store(true, std::memory_order_release);
  if (progress.joinable()) progress.Join();

  LoadResult result;
  result.open_loop = options.rate_rps > 0;
  result.offered_rps = options.rate_rps;
  result.connections = options.connections;
  std::int64_t last = 0;
  for (const auto& c : run.cores) {
    result.latency->Merge(c->latency);
    result.service->Merge(c->service);
    last = std::max(last, c->last_done_ns.load(std::memory_order_relaxed));
  }
  result.requests = Sum(run, &CoreStats::requests);
  result.ok = Sum(run, &CoreStats::ok);
  result.sent = Sum(run, &CoreStats::sent);
  result.errors = ErrorCounts{.connect = Sum(run, &CoreStats::connect),
                              .timeout = Sum(run, &CoreStats::timeout),
                              .io = Sum(run, &CoreStats::io),
                              .http_4xx = Sum(run, &CoreStats::http_4xx),
                              .http_5xx = Sum(run, &CoreStats::http_5xx),
                              .parse = Sum(run, &CoreStats::parse)};
  const std::int64_t start_ns = Ns(run.measure_start);
  result.duration_s = last > start_ns ? (last - start_ns) / 1e9
                                      : std::chrono::duration<double>(options.duration).count();
  return result;
}

Status<LoadResult> RunLoadInRuntime(const LoadOptions& options) {
  if (auto v = ValidateLoadOptions(options); !v) return std::unexpected(v.error());
#ifdef FAASNODE_HAVE_DPDK
  junction::net::dpdk::RegisterDpdkStack();
#endif
  const std::vector<int> allowed = sched::AllowedCpus();
  if (static_cast<std::size_t>(options.cores) > allowed.size()) {
    return std::unexpected(Error(ErrorCode::kInvalidArgument,
                                 fmt::format("--cores {} but this process may run on {} CPUs: ask for fewer",
                                             options.cores, allowed.size())));
  }
  sched::RuntimeConfig config;
  config.cores.assign(allowed.begin(), allowed.begin() + options.cores);
  // A stack per worker (and a few for the run itself) mapped at start, their tops mapped in:
  // a worker's first request then faults on none of its stack inside the measured window.
  config.stack_prealloc = static_cast<std::size_t>(options.connections / options.cores) + 16;
  auto rt = sched::Runtime::Create(config);
  if (!rt) return std::unexpected(rt.error());
  Status<LoadResult> result = std::unexpected(Error(ErrorCode::kInternal, "the runtime did not run"));
  auto ran = (*rt)->Run([&] {
    auto stack = junction::net::CreateStack(options.backend, options.stack_options);
    if (!stack) {
      result = std::unexpected(stack.error());
      return;
    }
    result = RunLoad(options, **stack);
    stack->reset();
  });
  if (!ran) return std::unexpected(ran.error());
  return result;
}

}  // namespace faasload
