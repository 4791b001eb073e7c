// load_generator_test.cc — faasload against a server with a known delay and a known stall:
// the reported percentiles and the coordinated-omission correction match the schedule.
#include "tests/load/load_generator.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/load/test_server.h"

namespace faasload {
namespace {

using namespace std::chrono_literals;
using testing::TestServer;
using testing::TestServerOptions;

// The tests measure the generator, not the machine: on a shared 2-core VM a woken thread can
// wait a scheduler tick (4 ms) behind a compiler, which is 20% of the injected delay. As root,
// the test's threads (the server's and the generator's runtime cores, created while this is
// in scope, inherit it) run SCHED_FIFO, so the other load cannot delay their wake-ups; the
// kernel's RT throttling still bounds them. Without the privilege, they run as they are.
class ScopedRealtime {
 public:
  ScopedRealtime() {
    sched_param p{.sched_priority = 10};
    ok_ = sched_setscheduler(0, SCHED_FIFO, &p) == 0;
  }
  ~ScopedRealtime() {
    if (!ok_) return;
    sched_param p{.sched_priority = 0};
    sched_setscheduler(0, SCHED_OTHER, &p);
  }
  ScopedRealtime(const ScopedRealtime&) = delete;
  ScopedRealtime& operator=(const ScopedRealtime&) = delete;

 private:
  bool ok_ = false;
};

// The p-th percentile (nearest rank) of what the server says it held, in ms.
double ServerPercentileMs(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return static_cast<double>(v[std::clamp<std::size_t>(rank, 1, v.size()) - 1]) / 1e6;
}

LoadOptions Options(int port) {
  LoadOptions o;
  o.target = junction::net::Endpoint{junction::net::Ipv4Addr::Loopback(), static_cast<std::uint16_t>(port)};
  o.kinds = {RequestKind{.weight = 1, .method = junction::http::Method::kPost,
                         .target = "/function/echo", .body = "hello"}};
  o.cores = 1;
  return o;
}

// What one attempt found wrong; empty when every check held.
using Problems = std::vector<std::string>;

void Check(Problems& p, bool ok, const std::string& what) {
  if (!ok) p.push_back(what);
}

bool Within(double got, double want, double tolerance) { return std::abs(got - want) <= tolerance; }

std::string Fmt(const char* name, double got, double want) {
  return std::string(name) + ": got " + std::to_string(got) + ", want " + std::to_string(want);
}

// Runs `attempt` up to three times and passes on the first attempt with no problems. A VM on a
// shared host sometimes wakes a halted vCPU milliseconds late (seen in strace: a request
// written by the generator read by the server 6.8 ms later, with both CPUs idle); that is the
// host, not the generator, and it does not repeat three times in a row. A generator that is
// wrong is wrong every time.
void PassesInOneOfThreeAttempts(const std::function<Problems()>& attempt) {
  std::string report;
  for (int i = 1; i <= 3; ++i) {
    const Problems p = attempt();
    if (p.empty()) return;
    report += "attempt " + std::to_string(i) + ":\n";
    for (const auto& line : p) report += "  " + line + "\n";
  }
  ADD_FAILURE() << "every attempt failed:\n" << report;
}

// Every response 50 ms after its request: p50 and p90 within 5% of what the server held, in
// both loops.
TEST(LoadGeneratorTest, KnownDelayShowsInPercentiles) {
  constexpr double kDelayMs = 50.0;
  ScopedRealtime rt;
  for (bool open : {false, true}) {
    SCOPED_TRACE(open ? "open loop" : "closed loop");
    PassesInOneOfThreeAttempts([&] {
      Problems p;
      TestServer server(TestServerOptions{.delay = 50ms});
      LoadOptions o = Options(server.port());
      o.connections = 4;
      o.rate_rps = open ? 40 : 0;  // open: 2 requests in flight on average, never 4
      o.warmup = 100ms;
      o.duration = 1s;
      auto r = RunLoadInRuntime(o);
      if (!r) return Problems{"run failed: " + std::string(r.error().message())};
      Check(p, r->errors.total() == 0, "errors: " + std::to_string(r->errors.total()));
      Check(p, r->ok == r->requests, "not every request was ok");
      // The truth: what the server held (its own lateness included), to which the generator
      // adds loopback and its own wake-up.
      const std::vector<std::int64_t> held = server.held_ns();
      for (double pct : {50.0, 90.0}) {
        const double truth = ServerPercentileMs(held, pct);
        const double got = r->latency->ValueAtPercentile(pct) / 1e6;
        const double service = r->service->ValueAtPercentile(pct) / 1e6;
        const std::string name = "p" + std::to_string(static_cast<int>(pct));
        Check(p, Within(got, truth, 0.05 * truth), Fmt((name + " latency ms").c_str(), got, truth));
        Check(p, Within(service, truth, 0.05 * truth), Fmt((name + " service ms").c_str(), service, truth));
        Check(p, Within(truth, kDelayMs, 0.05 * kDelayMs), Fmt((name + " server-held ms").c_str(), truth, kDelayMs));
      }
      Check(p, r->latency->min() >= 50'000'000u, "a latency below the injected delay");
      if (open) {
        // 40/s for 1 s: the schedule's count, give or take the boundary request.
        Check(p, Within(static_cast<double>(r->requests), 40.0, 1.0), Fmt("requests", r->requests, 40));
        Check(p, Within(r->throughput_rps(), 40.0, 2.0), Fmt("throughput", r->throughput_rps(), 40));
      } else {
        // 4 connections, a little over 50 ms per round trip: just under 80/s. The window runs
        // from the end of the warm-up, when every connection is part-way into an uncounted
        // request (up to one delay), so up to 5% more is lost at the start.
        const double ceiling = 4 * 1000 / kDelayMs;
        Check(p, r->throughput_rps() > 0.9 * ceiling && r->throughput_rps() <= ceiling,
              Fmt("closed-loop throughput", r->throughput_rps(), ceiling));
      }
      return p;
    });
  }
}

// Open loop, 500 req/s for 1 s over 8 connections; the server stalls every response for
// 200 ms once, starting at request 300 (0.6 s into the run, 0.5 s after the warm-up's start).
// A request scheduled t ms after the stall began completes when it ends: latency ~200 - t ms.
// So the requests above X ms are those scheduled in the first 200 - X ms of the stall:
// (200 - X) ms x 500/s of the 500 counted. The service time (from the actual write) sees the
// stall only on the 8 requests that were in flight.
TEST(LoadGeneratorTest, StallIsCorrectedForCoordinatedOmission) {
  constexpr double kRate = 500;
  ScopedRealtime rt;
  PassesInOneOfThreeAttempts([&] {
    Problems p;
    TestServer server(TestServerOptions{.stall_after = 300, .stall = 200ms});
    LoadOptions o = Options(server.port());
    o.connections = 8;
    o.rate_rps = kRate;
    o.warmup = 100ms;
    o.duration = 1s;
    auto r = RunLoadInRuntime(o);
    if (!r) return Problems{"run failed: " + std::string(r.error().message())};
    if (server.stall_start_ns() == 0) return Problems{"the server never stalled"};
    Check(p, r->errors.total() == 0, "errors: " + std::to_string(r->errors.total()));
    Check(p, Within(static_cast<double>(r->requests), 500.0, 1.0), Fmt("requests", r->requests, 500));
    for (double x_ms : {50.0, 100.0, 150.0}) {
      const double expected = (200.0 - x_ms) / 1000.0 * kRate;
      const double got = static_cast<double>(r->latency->CountAbove(static_cast<std::uint64_t>(x_ms * 1e6)));
      Check(p, Within(got, expected, std::max(1.0, 0.05 * expected)),
            Fmt(("requests above " + std::to_string(static_cast<int>(x_ms)) + " ms").c_str(), got, expected));
    }
    // Corrected: the 10% slowest are the first 100 ms' worth of stalled requests (50 of 500),
    // so p90 ~ 200 - 100 = 100 ms.
    const double p90 = r->latency->ValueAtPercentile(90) / 1e6;
    Check(p, Within(p90, 100.0, 5.0), Fmt("corrected p90 ms", p90, 100));
    Check(p, r->latency->max() > 190'000'000u, "the corrected max misses the stall");
    // Uncorrected service time: at most the 8 in-flight requests waited; p98 stays small.
    const double service_p98 = r->service->ValueAtPercentile(98) / 1e6;
    Check(p, service_p98 < 5.0, Fmt("service p98 ms (want below)", service_p98, 5.0));
    Check(p, r->service->CountAbove(50'000'000) <= 8u, "more than the 8 in-flight requests saw the stall");
    return p;
  });
}

}  // namespace
}  // namespace faasload
