// sched_bench.cc — the runtime's costs beside a raw Boost.Context jump and std::thread +
// condvar, all in one run (Google Benchmark; not part of ctest). See docs/benchmarks/runtime.md.
#include <benchmark/benchmark.h>
#include <boost/context/detail/fcontext.hpp>

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"
#include "junction/sched/tsc.h"

namespace {
namespace ctx = boost::context::detail;
using namespace junction::sched;

std::vector<int> Cpus(int n) {
  auto c = AllowedCpus();
  if (static_cast<int>(c.size()) > n) c.resize(n);
  return c;
}

template <typename F>
void InRuntime(int cores, F&& body) {
  auto rt = Runtime::Create(RuntimeConfig{.cores = Cpus(cores)});
  if (!rt) {
    std::fprintf(stderr, "%s\n", rt.error().message().c_str());
    std::abort();
  }
  // The measured side runs unstealable on core 0, so a peer core cannot take it over.
  (void)(*rt)->Run([&] {
    auto h = Spawn([&] { body(); }, {.core = 0, .stealable = false});
    h->Join();
  });
}

// --- baselines ------------------------------------------------------------------------------

void BM_RawFcontextSwitch(benchmark::State& state) {
  static char stack[64 * 1024];
  auto entry = [](ctx::transfer_t t) {
    while (true) t = ctx::jump_fcontext(t.fctx, nullptr);
  };
  ctx::fcontext_t other = ctx::make_fcontext(stack + sizeof(stack), sizeof(stack), entry);
  for (auto _ : state) {
    other = ctx::jump_fcontext(other, nullptr).fctx;  // two switches: there and back
  }
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["ns_per_switch"] = benchmark::Counter(
      static_cast<double>(state.iterations() * 2), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RawFcontextSwitch);

void BM_StdThreadSpawnJoin(benchmark::State& state) {
  for (auto _ : state) {
    std::thread t([] { benchmark::ClobberMemory(); });
    t.join();
  }
}
BENCHMARK(BM_StdThreadSpawnJoin)->UseRealTime();

// Round trip of a hand-off between two kthreads through a mutex and a condition variable.
void BM_StdCondvarPingPong(benchmark::State& state) {
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;
  bool stop = false;
  std::thread peer([&] {
    std::unique_lock<std::mutex> l(mu);
    while (true) {
      cv.wait(l, [&] { return turn == 1 || stop; });
      if (stop) return;
      turn = 0;
      cv.notify_one();
    }
  });
  for (auto _ : state) {
    std::unique_lock<std::mutex> l(mu);
    turn = 1;
    cv.notify_one();
    cv.wait(l, [&] { return turn == 0; });
  }
  {
    std::lock_guard<std::mutex> l(mu);
    stop = true;
    cv.notify_one();
  }
  peer.join();
}
BENCHMARK(BM_StdCondvarPingPong)->UseRealTime();

// Mutex hand-off between two kthreads: each takes the lock when it is its turn.
void BM_StdMutexHandoff(benchmark::State& state) {
  std::mutex mu;
  std::atomic<int> turn{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    while (!stop.load()) {
      if (turn.load() == 1) {
        std::lock_guard<std::mutex> l(mu);
        turn.store(0);
      }
    }
  });
  for (auto _ : state) {
    {
      std::lock_guard<std::mutex> l(mu);
      turn.store(1);
    }
    while (turn.load() != 0) {
    }
  }
  stop.store(true);
  peer.join();
}
BENCHMARK(BM_StdMutexHandoff)->UseRealTime();

// --- the runtime ----------------------------------------------------------------------------

// One yield: two uthreads on one core alternate; each iteration is two switches. With
// accounts:1 they bill different accounts (as two invocations would), so every switch also
// reads the TSC and adds to the core's account table.
void BM_UthreadYield(benchmark::State& state) {
  const bool two_accounts = state.range(0) != 0;
  InRuntime(1, [&] {
    std::atomic<bool> stop{false};
    if (two_accounts) SetAccount(accounts::kFirstUser + 1);
    auto peer = *Spawn([&] {
      while (!stop.load(std::memory_order_relaxed)) Yield();
    }, {.account = two_accounts ? accounts::kFirstUser + 2 : accounts::kInherit});
    Yield();
    for (auto _ : state) Yield();
    stop.store(true);
    peer.Join();
  });
  state.counters["ns_per_yield"] = benchmark::Counter(
      static_cast<double>(state.iterations() * 2), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_UthreadYield)->Arg(0)->Arg(1)->ArgName("accounts")->UseRealTime();

void BM_UthreadSpawnJoin(benchmark::State& state) {
  InRuntime(1, [&] {
    for (auto _ : state) {
      auto h = Spawn([] { benchmark::ClobberMemory(); });
      h->Join();
    }
  });
}
BENCHMARK(BM_UthreadSpawnJoin)->UseRealTime();

// Park/unpark ping-pong between uthreads on two polling cores. Reports the round trip and the
// one-way wake latency as p50/p99: from the TSC just before Unpark() on one core to the TSC
// just after Park() returned on the other (TSCs are synchronised across cores here).
// drained:0 takes the TSC right after the benchmark's own `turn` store, so the wake also pays
// for that store's cache line (Unpark's locked CAS waits for it). drained:1 waits for that
// store first (mfence; lfence orders the TSC read after it): the wake-up's own cost.
void BM_UthreadCrossCoreWake(benchmark::State& state) {
  const bool drained = state.range(0) != 0;
  if (Cpus(2).size() < 2) {
    state.SkipWithError("needs 2 CPUs");
    return;
  }
  std::vector<std::uint64_t> lat;
  lat.reserve(1 << 20);
  InRuntime(2, [&] {
    std::atomic<int> turn{0};
    std::atomic<std::uint64_t> stamp{0};
    std::atomic<bool> stop{false};
    ThreadRef me = Self();
    std::atomic<ThreadRef> peer_ref{nullptr};
    auto peer = *Spawn([&] {
      peer_ref.store(Self());
      while (true) {
        std::uint64_t woke = 0;  // TSC when Park returned: before touching any shared line
        while (turn.load(std::memory_order_acquire) != 1) {
          if (stop.load()) return;
          Park();
          woke = Rdtsc();
        }
        if (woke != 0 && lat.size() < lat.capacity()) {
          lat.push_back(woke - stamp.load(std::memory_order_relaxed));
        }
        turn.store(0, std::memory_order_release);
        Unpark(me);
      }
    }, {.core = 1, .stealable = false});
    while (peer_ref.load() == nullptr) Yield();
    ThreadRef peer_thread = peer_ref.load();
    for (auto _ : state) {
      turn.store(1, std::memory_order_release);
      if (drained) {
        _mm_mfence();
        _mm_lfence();
      }
      stamp.store(Rdtsc(), std::memory_order_relaxed);  // the wake starts at Unpark
      Unpark(peer_thread);
      while (turn.load(std::memory_order_acquire) != 0) Park();
    }
    stop.store(true);
    Unpark(peer_ref.load());
    peer.Join();
  });
  if (!lat.empty()) {
    std::sort(lat.begin(), lat.end());
    state.counters["wake_p50_ns"] = CyclesToNs(lat[lat.size() / 2]);
    state.counters["wake_p99_ns"] = CyclesToNs(lat[lat.size() * 99 / 100]);
  }
}
BENCHMARK(BM_UthreadCrossCoreWake)->Arg(0)->Arg(1)->ArgName("drained")->UseRealTime();

void BM_UthreadCondvarPingPong(benchmark::State& state) {
  InRuntime(2, [&] {
    Mutex mu;
    CondVar cv;
    int turn = 0;
    bool stop = false;
    auto peer = *Spawn([&] {
      std::unique_lock<Mutex> l(mu);
      while (true) {
        cv.Wait(l, [&] { return turn == 1 || stop; });
        if (stop) return;
        turn = 0;
        cv.NotifyOne();
      }
    }, {.core = static_cast<int>(state.range(0)), .stealable = false});
    for (auto _ : state) {
      std::unique_lock<Mutex> l(mu);
      turn = 1;
      cv.NotifyOne();
      cv.Wait(l, [&] { return turn == 0; });
    }
    {
      std::lock_guard<Mutex> l(mu);
      stop = true;
      cv.NotifyOne();
    }
    peer.Join();
  });
}
BENCHMARK(BM_UthreadCondvarPingPong)->Arg(0)->Arg(1)->ArgName("peer_core")->UseRealTime();

void BM_UthreadMutexHandoff(benchmark::State& state) {
  InRuntime(2, [&] {
    Mutex mu;
    std::atomic<int> turn{0};
    std::atomic<bool> stop{false};
    auto peer = *Spawn([&] {
      while (!stop.load()) {
        if (turn.load() == 1) {
          std::lock_guard<Mutex> l(mu);
          turn.store(0);
        } else {
          Yield();
        }
      }
    }, {.core = 1, .stealable = false});
    for (auto _ : state) {
      {
        std::lock_guard<Mutex> l(mu);
        turn.store(1);
      }
      while (turn.load() != 0) Yield();
    }
    stop.store(true);
    peer.Join();
  });
}
BENCHMARK(BM_UthreadMutexHandoff)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
