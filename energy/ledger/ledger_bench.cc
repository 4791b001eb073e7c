// ledger_bench.cc — the data-path cost of recording an invocation: Ledger::Push (sequence
// number + SPSC copy, or the overflow fold when the ring is full) and the bare SPSC ring.
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>

#include "energy/ledger/ledger.h"

namespace energy {
namespace {

// CPU seconds of the whole process (user + system): while the benchmark thread waits in
// Flush(), what it adds up is the ledger writer's work.
double ProcessCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

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

std::vector<InvocationRecord> Records(size_t n) {
  std::vector<InvocationRecord> recs;
  for (size_t i = 0; i < n; ++i) recs.push_back(Record(i));
  return recs;
}

// A ledger whose writer packs every round (pack_at = 1: even a round that wakes while the
// records are still being pushed and finds only a few; at the default 256 such a round wrote
// rows, and a wait for every record to be packed never ended) and never expands on its own.
junction::Status<std::unique_ptr<Ledger>> OpenPackingLedger(const std::string& dir, size_t n) {
  std::filesystem::create_directories(dir);
  return Ledger::Open({.path = dir + "/ledger.db", .queue_capacity = n * 2,
                       .flush_interval = std::chrono::milliseconds(1), .pack_at = 1,
                       .expand_delay = std::chrono::hours(1)});
}

// Waits (polling every 0.2 ms) until the writer has committed `packed` records as packs.
void WaitPacked(const Ledger& ledger, uint64_t packed) {
  while (ledger.stats().records_packed < packed) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void CloseAndRemove(std::unique_ptr<Ledger>& ledger, const std::string& dir) {
  (void)ledger->Close();
  ledger.reset();
  std::filesystem::remove_all(dir);
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
  state.counters["aggregated"] = static_cast<double>(aggregated);
  CloseAndRemove(*ledger, dir);
}
BENCHMARK(BM_LedgerPush)->Arg(1024)->Arg(65536);

// The writer's cost per row: state.range(0) records pushed at once (the ring holds them
// all), then Flush() — the time is the writer turning them into committed SQLite rows, which
// on a node is CPU the ledger thread takes from the machine for every invocation.
void BM_LedgerWriteRows(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::string dir = "/tmp/energy-ledger-bench-w-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto ledger = Ledger::Open({.path = dir + "/ledger.db", .queue_capacity = n * 2,
                              .flush_interval = std::chrono::milliseconds(100000), .pack_at = 0});
  if (!ledger) {
    state.SkipWithError(ledger.error().message().c_str());
    return;
  }
  const std::vector<InvocationRecord> recs = Records(n);
  double writer_cpu = 0.0;  // what a node pays: the wall time also holds the checkpoints' fsync
  for (auto _ : state) {
    state.PauseTiming();
    for (const InvocationRecord& r : recs) (void)(*ledger)->Push(0, r);
    state.ResumeTiming();
    const double cpu0 = ProcessCpuSeconds();
    if (auto f = (*ledger)->Flush(); !f) state.SkipWithError(f.error().message().c_str());
    writer_cpu += ProcessCpuSeconds() - cpu0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.counters["ns_per_row"] = benchmark::Counter(
      static_cast<double>(state.iterations() * n), benchmark::Counter::kIsRate |
                                                       benchmark::Counter::kInvert);
  state.counters["cpu_ns_per_row"] =
      writer_cpu * 1e9 / static_cast<double>(state.iterations() * n);
  CloseAndRemove(*ledger, dir);
}
BENCHMARK(BM_LedgerWriteRows)->Arg(20000)->UseRealTime()->Unit(benchmark::kMillisecond);

// The writer's cost per record while it is behind (ledger.h, "Packs"): state.range(0) records
// pushed at once, then the time until the writer has committed them all as packs (packs are
// not expanded inside the timing). Compare with BM_LedgerWriteRows: the difference is what
// packing takes off a saturated node, for now — the expansion, later, costs a row's price
// (BM_LedgerExpandPacks).
void BM_LedgerWritePacks(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::string dir = "/tmp/energy-ledger-bench-p-" + std::to_string(getpid());
  auto ledger = OpenPackingLedger(dir, n);
  if (!ledger) {
    state.SkipWithError(ledger.error().message().c_str());
    return;
  }
  const std::vector<InvocationRecord> recs = Records(n);
  double writer_cpu = 0.0;
  uint64_t packed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const double cpu0 = ProcessCpuSeconds();
    for (const InvocationRecord& r : recs) (void)(*ledger)->Push(0, r);
    const double push_cpu = ProcessCpuSeconds() - cpu0;
    state.ResumeTiming();
    packed += n;
    WaitPacked(**ledger, packed);
    writer_cpu += ProcessCpuSeconds() - cpu0 - push_cpu;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.counters["ns_per_record"] = benchmark::Counter(
      static_cast<double>(state.iterations() * n), benchmark::Counter::kIsRate |
                                                       benchmark::Counter::kInvert);
  state.counters["cpu_ns_per_record"] =
      writer_cpu * 1e9 / static_cast<double>(state.iterations() * n);
  CloseAndRemove(*ledger, dir);
}
BENCHMARK(BM_LedgerWritePacks)->Arg(1000)->Arg(20000)->UseRealTime()->Unit(benchmark::kMillisecond);

// The expansion's cost per record (ledger.h, "Packs"): state.range(0) records pushed and packed
// (untimed), then Flush(), which turns every pack into its `invocations` rows; the timing and
// the CPU are that Flush. A busy node spends this later, when it has slack (energy.md, 2026-12-07
// "sixth session": ~1.5-1.7 us a call on the node, several times the packing).
void BM_LedgerExpandPacks(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::string dir = "/tmp/energy-ledger-bench-e-" + std::to_string(getpid());
  auto ledger = OpenPackingLedger(dir, n);
  if (!ledger) {
    state.SkipWithError(ledger.error().message().c_str());
    return;
  }
  const std::vector<InvocationRecord> recs = Records(n);
  double writer_cpu = 0.0;
  uint64_t packed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (const InvocationRecord& r : recs) (void)(*ledger)->Push(0, r);
    packed += n;
    WaitPacked(**ledger, packed);
    state.ResumeTiming();
    const double cpu0 = ProcessCpuSeconds();
    if (auto f = (*ledger)->Flush(); !f) state.SkipWithError(f.error().message().c_str());
    writer_cpu += ProcessCpuSeconds() - cpu0;
  }
  if ((*ledger)->stats().records_expanded != packed) state.SkipWithError("not every packed record was expanded");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.counters["cpu_ns_per_record"] =
      writer_cpu * 1e9 / static_cast<double>(state.iterations() * n);
  CloseAndRemove(*ledger, dir);
}
BENCHMARK(BM_LedgerExpandPacks)->Arg(20000)->UseRealTime()->Unit(benchmark::kMillisecond);

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
