// ledger_bench.cc — the data-path cost of recording an invocation: Ledger::Push (sequence
// number + SPSC copy, or the overflow fold when the ring is full) and the bare SPSC ring.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "energy/ledger/ledger.h"

namespace energy {
namespace {

InvocationRecord Record(uint64_t i) {
  InvocationRecord r;
  r.call_id.Assign("4f1c2d3e-0000-4000-8000-" + std::to_string(100000000000 + i));
  r.function.Assign("echo");
  r.ns.Assign("openfaas-fn");
  r.start_ns = static_cast<int64_t>(i) * 1000;
  r.end_ns = r.start_ns + 800;
  r.cycles = 2400;
  r.joules.Set(Zone::kPackage, Joules{1e-5});
  r.joules.sources.Add(Source::kModel);
  r.status = 200;
  return r;
}

// Push with the writer thread draining into SQLite; the counters say how many pushes were
// folded into overflow aggregates because the writer fell behind.
void BM_LedgerPush(benchmark::State& state) {
  std::string dir = "/tmp/energy-ledger-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto ledger = Ledger::Open(
      {.path = dir + "/ledger.db", .queue_capacity = static_cast<size_t>(state.range(0))});
  if (!ledger) {
    state.SkipWithError(ledger.error().message().c_str());
    return;
  }
  InvocationRecord r = Record(1);
  uint64_t aggregated = 0;
  for (auto _ : state) {
    auto p = (*ledger)->Push(0, r);
    aggregated += p && p->aggregated;
    benchmark::DoNotOptimize(p);
  }
  (void)(*ledger)->Close();
  state.counters["aggregated"] = static_cast<double>(aggregated);
  ledger->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LedgerPush)->Arg(1024)->Arg(65536);

void BM_SpscPushPop(benchmark::State& state) {
  SpscQueue<InvocationRecord> q(1024);
  InvocationRecord r = Record(1), out;
  for (auto _ : state) {
    q.TryPush(r);
    q.TryPop(&out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_SpscPushPop);

}  // namespace
}  // namespace energy

BENCHMARK_MAIN();
