// function_pool.h — the instances of one deployed function: cold start, least-loaded pick,
// per-instance in-flight limit, scale to zero.
//
// A pool holds up to `replicas` instances of one function: native Instances of a
// NativeFunction, or whatever an InstanceFactory makes (exec functions). Invoke() runs a request on
// the warm instance with the fewest requests in flight; when none is warm, or every warm one
// is at its in-flight limit and the pool may still grow, it cold-starts one (the function's
// init) on the calling uthread and reports how long that took. When every instance is at its
// limit and the pool is full, the request is refused (429) without running.
// ReapIdle() finis instances idle for longer than idle_timeout (scale to zero).
//
// Threads: every method may be called from uthreads on any core at once. The instance list
// is guarded by a uthread Mutex held only to pick or add an instance, never across Invoke.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "faasd-shim/store/instance.h"
#include "faasd-shim/store/native_function.h"
#include "junction/base/error.h"
#include "junction/sched/sync.h"
#include "junction/sched/tsc.h"

namespace faasnode::instances {

// A copy of `s` that lives until the process ends: function and namespace names that outlive
// the pools that carried them (the energy biller keeps views of them). Takes a lock; call it
// when a pool is made, not per call. Grows only with distinct names ever deployed.
std::string_view InternName(std::string_view s);

// Makes one instance (its cold start); called on the invoking uthread, from any core, possibly
// on several at once. Errors become kColdStartFailed with their message.
using InstanceFactory =
    std::function<junction::Status<std::unique_ptr<store::FunctionInstance>>()>;

struct PoolOptions {
  int replicas = 1;               // the most instances at once (>= 1)
  int max_inflight = 0;           // per instance; 0: unlimited
  std::chrono::milliseconds idle_timeout{0};  // scale down after this long idle; 0: never
  int min_instances = 0;          // the reaper keeps this many warm (com.openfaas.scale.min)
  store::FunctionEnv env;            // native instances only (a factory brings its own)
  store::InstanceOptions instance;   // native instances only
};

// How one invocation went, beside the function's own response.
struct InvokeOutcome {
  enum class Kind { kServed, kOverloaded, kColdStartFailed, kFunctionFailed } kind = Kind::kServed;
  bool cold_start = false;
  std::chrono::nanoseconds cold_start_time{0};
  std::string error;  // for every kind but kServed: what went wrong, for the 4xx/5xx body
};

// The upper bounds (seconds) of the cold-start histogram: a native init takes about a
// millisecond, a function that loads weights seconds.
inline constexpr std::array<double, 12> kColdStartBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                            0.1,   0.25,   0.5,   1,    2.5,   10};

// Cold starts that a call waited for (the ones X-Cold-Start-Seconds reports), not instances
// started ahead of calls (Prewarm).
struct ColdStartHistogram {
  std::uint64_t count = 0;
  std::uint64_t ns_total = 0;
  std::array<std::uint64_t, kColdStartBounds.size()> cumulative{};  // [i]: those <= bounds[i]
};

struct PoolStats {
  int instances = 0;
  std::uint64_t cold_starts = 0;          // every instance started: on a call's path or Prewarm
  std::uint64_t cold_start_ns_total = 0;
  ColdStartHistogram call_cold_starts;    // only those on a call's path
  std::uint64_t rejected_429 = 0;
  std::uint64_t scaled_down = 0;
};

class FunctionPool {
 public:
  // Native: instances are store::Instance::Create(fn, options.env, options.instance).
  FunctionPool(std::string name, std::shared_ptr<const store::NativeFunction> fn, PoolOptions options);
  // Any kind: instances come from `factory` (not empty).
  FunctionPool(std::string name, InstanceFactory factory, PoolOptions options);
  ~FunctionPool();
  FunctionPool(const FunctionPool&) = delete;
  FunctionPool& operator=(const FunctionPool&) = delete;

  // Runs `request` on an instance; `response` holds the function's answer when the outcome
  // is kServed. Never throws.
  InvokeOutcome Invoke(const store::Request& request, store::Response& response);

  // Finis instances idle past idle_timeout (none when it is 0), keeping at least floor()
  // warm. Returns how many went.
  int ReapIdle(junction::sched::Clock::time_point now);

  // Starts instances (on the calling uthread, one after another) until `count` are warm, at
  // most `replicas`. Errors: the first cold start that failed (the instances started before it
  // stay).
  junction::Status<void> Prewarm(int count);
  // The fewest instances the reaper leaves warm: options().min_instances until set (by
  // /system/scale-function).
  int floor() const { return floor_.load(std::memory_order_relaxed); }
  void set_floor(int n) { floor_.store(n, std::memory_order_relaxed); }
  // Calls that reached Invoke (served or not), since the pool was made.
  std::uint64_t invocations() const { return invocations_.load(std::memory_order_relaxed); }

  const std::string& name() const { return name_; }
  // The name and namespace as views valid for the life of the process (InternName).
  std::string_view stable_name() const { return stable_name_; }
  std::string_view ns() const { return ns_; }
  // Set by the InstanceManager before the pool is published.
  void set_ns(std::string_view ns) { ns_ = InternName(ns); }
  const PoolOptions& options() const { return options_; }
  PoolStats stats();

 private:
  struct Slot {
    std::unique_ptr<store::FunctionInstance> instance;
    std::atomic<int> inflight{0};
    std::atomic<std::int64_t> last_used_ns{0};
    std::atomic<int> users{0};  // pickers holding a pointer; a slot with users is never reaped
  };
  Slot* Pick(bool* must_cold_start);

  const std::string name_;
  const std::string_view stable_name_;
  std::string_view ns_ = "openfaas-fn";
  const PoolOptions options_;
  const InstanceFactory factory_;
  junction::sched::Mutex mu_;               // guards slots_ (the vector, not the slots)
  junction::sched::CondVar started_;        // a cold start finished (or failed)
  std::vector<std::unique_ptr<Slot>> slots_;
  int starting_ = 0;                         // cold starts in progress (under mu_)
  std::atomic<int> floor_{0};
  std::atomic<std::uint64_t> invocations_{0};
  std::atomic<std::uint64_t> cold_starts_{0}, cold_ns_{0}, rejected_{0}, reaped_{0};
  // Cold starts on a call's path: their count, total ns, and per bucket (not cumulative; the
  // last slot is past the last bound).
  std::atomic<std::uint64_t> call_cold_{0}, call_cold_ns_{0};
  std::array<std::atomic<std::uint64_t>, kColdStartBounds.size() + 1> call_cold_buckets_{};
};

}  // namespace faasnode::instances
