// runtime.cc — starting and stopping the worker kthreads, and the interval-close reader.
#include "junction/sched/runtime.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <fmt/format.h>

#include "junction/sched/core.h"
#include "junction/sched/heap_prealloc.h"
#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace junction::sched {
namespace {
std::atomic<Runtime*> g_current{nullptr};
}

Runtime* Runtime::Current() { return g_current.load(std::memory_order_acquire); }

Runtime::Runtime(const RuntimeConfig& config)
    : config_(config),
      external_pool_(StackPoolOptions{config.stack_size, config.stack_guard, 16}) {}

Status<std::unique_ptr<Runtime>> Runtime::Create(const RuntimeConfig& config) {
  if (auto v = ValidateRuntimeConfig(config); !v) return std::unexpected(v.error());
  TscHz();  // calibrate now, not on the first switch
  if (config.heap_prealloc > 0 && !KeepFreedHeap(config.heap_prealloc)) {
    // Only an optimisation: the cores' pre-grown heaps may then shrink back at a free.
    fmt::print(stderr, "runtime: raising the malloc trim threshold failed; heap_prealloc may not hold\n");
  }
  std::unique_ptr<Runtime> rt(new Runtime(config));
  for (std::size_t i = 0; i < config.cores.size(); ++i) {
    rt->cores_.push_back(std::make_unique<Core>(rt.get(), static_cast<int>(i), config.cores[i], config));
    if (auto s = rt->cores_.back()->Init(); !s) return std::unexpected(s.error());
  }
  return rt;
}

Runtime::~Runtime() = default;

Status<char*> Runtime::ExternalStack() {
  std::lock_guard<std::mutex> lock(external_mu_);
  return external_pool_.Get();
}

CoreCounters Runtime::counters(int core_index) const { return cores_[core_index]->counters(); }

Status<void> Runtime::Run(std::function<void()> main) {
  Runtime* expected = nullptr;
  if (!g_current.compare_exchange_strong(expected, this)) {
    return MakeError(ErrorCode::kAlreadyExists,
                     "Runtime::Run: another runtime is already running in this process");
  }
  stop_.store(false);
  close_pending_ = false;
  std::atomic<bool> done{false};
  std::function<void()> body = std::move(main);
  auto spawned = Spawn(
      [&] {
        body();
        done.store(true, std::memory_order_release);
        done.notify_all();
      },
      SpawnOptions{.core = 0});
  if (!spawned) {
    g_current.store(nullptr);
    return std::unexpected(spawned.error());
  }
  spawned->Detach();

  std::atomic<int> pin_failures{0};
  std::string pin_error;
  std::mutex pin_mu;
  running_.store(true, std::memory_order_release);
  for (auto& core : cores_) {
    Core* c = core.get();
    workers_.emplace_back([c, &pin_failures, &pin_error, &pin_mu] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(c->cpu(), &set);
      if (int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
        std::lock_guard<std::mutex> l(pin_mu);
        pin_error = fmt::format("pinning core {} to CPU {} failed: {}", c->index(), c->cpu(),
                                std::strerror(rc));
        pin_failures.fetch_add(1);
      }
      char name[16];
      std::snprintf(name, sizeof(name), "junction/%d", c->cpu());
      pthread_setname_np(pthread_self(), name);
      c->Main();
    });
  }
  done.wait(false, std::memory_order_acquire);
  stop_.store(true, std::memory_order_seq_cst);
  for (auto& core : cores_) core->Kick();
  for (auto& w : workers_) w.join();
  workers_.clear();
  running_.store(false, std::memory_order_release);
  g_current.store(nullptr, std::memory_order_release);
  if (pin_failures.load() > 0) {
    return MakeError(ErrorCode::kUnavailable, pin_error + "; check runtime.cores against taskset/cgroups");
  }
  return {};
}

Status<IntervalSnapshot> Runtime::CloseInterval(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(close_mu_);
  if (!running()) {
    return MakeError(ErrorCode::kUnavailable, "CloseInterval: the runtime is not running");
  }
  if (!close_pending_) {
    close_tsc_.store(Rdtsc(), std::memory_order_relaxed);
    close_seq_.fetch_add(1, std::memory_order_seq_cst);
    close_pending_ = true;
  }
  const std::uint64_t seq = close_seq_.load(std::memory_order_relaxed);
  // A core blocked idle is closed here, on its behalf, without a wake-up; one that is blocking
  // right now (between its last look at close_seq_ and opening its gate) is kicked, as is one
  // whose gate is shut for another reason: it then closes at its next switch point.
  for (auto& core : cores_) {
    if (core->published_seq() != seq && !core->TryCloseWhileBlocked() && core->sleeping()) core->Kick();
  }
  const auto give_up = Clock::now() + timeout;
  const bool in_uthread = InRuntime();
  // The wait backs off from 20 us to 1 ms (doubling): a core that is slow to reach a switch
  // point (descheduled by the kernel, a long uthread) costs a few wake-ups, not one per 20 us.
  long wait_us = 20;
  for (auto& core : cores_) {
    while (core->published_seq() != seq) {
      if (core->TryCloseWhileBlocked()) break;  // it blocked since
      if (Clock::now() > give_up) {
        return MakeError(ErrorCode::kTimedOut,
                         fmt::format("CloseInterval: core {} (CPU {}) did not reach a switch point "
                                     "within {} ms: a uthread is running without yielding; "
                                     "call again to finish this interval",
                                     core->index(), core->cpu(), timeout.count()));
      }
      if (in_uthread) {
        SleepFor(std::chrono::microseconds(wait_us));
      } else {
        timespec ts{0, wait_us * 1000};
        nanosleep(&ts, nullptr);
      }
      wait_us = std::min<long>(wait_us * 2, 1000);
    }
  }
  IntervalSnapshot snap;
  snap.seq = seq;
  snap.tsc_hz = TscHz();
  snap.cores.resize(cores_.size());
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    cores_[i]->closed_table().ExportTo(&snap.cores[i]);
    snap.cores[i].core = static_cast<int>(i);
    snap.cores[i].cpu = cores_[i]->cpu();
  }
  close_pending_ = false;
  return snap;
}

}  // namespace junction::sched
