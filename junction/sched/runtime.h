// runtime.h — the uthread runtime: one pinned worker kthread per configured core.
//
//   auto rt = junction::sched::Runtime::Create(config);   // validates, maps nothing yet
//   if (!rt) { print rt.error().message(); exit(2); }
//   (*rt)->Run([] { auto h = Spawn([] { ... }); h->Join(); });
//
// One Runtime may run at a time per process. Run() blocks the calling kthread (which is not
// a worker) until `main` returns, then stops the workers; uthreads still alive then are
// abandoned without running their destructors, so join what you spawn. CloseInterval() and
// the counters may be called from any thread while Run() is in progress.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "junction/base/error.h"
#include "junction/sched/cycle_accounts.h"
#include "junction/sched/runtime_config.h"
#include "junction/sched/stack_pool.h"

namespace junction::sched {

class Core;
struct CoreCounters;

class Runtime {
 public:
  // Validates the config (see ValidateRuntimeConfig) and prepares the cores.
  static Status<std::unique_ptr<Runtime>> Create(const RuntimeConfig& config);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Starts the workers, runs `main` as a uthread on core 0, waits for it, stops the workers.
  // Errors: kUnavailable when a worker cannot be pinned, kAlreadyExists when another Runtime
  // is running in this process.
  Status<void> Run(std::function<void()> main);

  // Closes the current accounting interval on every core and returns what each core's
  // accounts got since the previous close (or since Run started). One caller at a time
  // (serialised internally). Blocks until every core has reached a switch point — at most
  // `timeout`; a core running a uthread that never yields delays it (kTimedOut; the request
  // stays pending and the next call completes it). A core blocked idle is closed by the
  // caller on its behalf, without waking it. From a uthread it sleeps cooperatively while
  // waiting; from a kthread it polls with short sleeps.
  Status<IntervalSnapshot> CloseInterval(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(1000));

  int num_cores() const { return static_cast<int>(cores_.size()); }
  const RuntimeConfig& config() const { return config_; }
  CoreCounters counters(int core_index) const;
  bool running() const { return running_.load(std::memory_order_acquire); }

  // The runtime running in this process, or nullptr.
  static Runtime* Current();

  // --- internal to junction/sched ---
  Core* core(int i) const { return cores_[i].get(); }
  bool stopping() const { return stop_.load(std::memory_order_seq_cst); }
  std::uint64_t close_seq() const { return close_seq_.load(std::memory_order_acquire); }
  std::uint64_t close_tsc() const { return close_tsc_.load(std::memory_order_relaxed); }
  std::atomic<int>& num_sleeping() { return num_sleeping_; }
  Status<char*> ExternalStack();  // a stack for a spawn from outside the runtime
  int NextExternalCore() { return static_cast<int>(rr_.fetch_add(1) % cores_.size()); }

 private:
  explicit Runtime(const RuntimeConfig& config);

  RuntimeConfig config_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::vector<std::thread> workers_;
  std::atomic<bool> running_{false};
  alignas(64) std::atomic<bool> stop_{false};
  alignas(64) std::atomic<std::uint64_t> close_seq_{0};
  std::atomic<std::uint64_t> close_tsc_{0};
  alignas(64) std::atomic<int> num_sleeping_{0};
  std::atomic<std::uint64_t> rr_{0};
  std::mutex close_mu_;
  bool close_pending_ = false;
  std::mutex external_mu_;
  StackPool external_pool_;
};

}  // namespace junction::sched
