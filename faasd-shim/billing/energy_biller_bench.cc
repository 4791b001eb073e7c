// energy_biller_bench.cc — the billing threads' CPU per call, measured on their own: a runtime
// core completes calls as the invoke handler does (a sequential call account from the handler's
// TSC reading, a few µs of work, Complete with a UUID call id), and the benchmark reads the
// CPU time of the sampler (faasnode-energy) and the ledger writer (faasnode-ledger) from
// /proc/self/task/*/schedstat until every call is committed to the ledger.
//
// Why: the paired node bench (scripts/bench-energy-paired.sh) resolves the ledger's throughput
// cost to about ±1.5 points in 8 minutes; the billing threads' own CPU per call is the part a
// change to the sampler or the writer moves, and this reads it to a few ns in seconds.
//
//   build/faasd-shim/billing/energy_biller_bench            # sampler_ns / writer_ns per call
// The writer's figure is its packing (the calls arrive faster than pack_at per round): the
// expansion into rows later, when the node is idle, is BM_LedgerExpandPacks's.
#include <benchmark/benchmark.h>

#include <dirent.h>

#include <chrono>
#include <cstring>
#include <vector>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "energy/sensors/replay.h"
#include "faasd-shim/billing/call_cycles.h"
#include "faasd-shim/billing/energy_biller.h"
#include "faasd-shim/billing/steady_meter.h"
#include "junction/base/uuid.h"
#include "junction/sched/cycle_accounts.h"
#include "junction/sched/runtime.h"
#include "junction/sched/runtime_config.h"
#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace faasnode::billing {
namespace {

using namespace std::chrono_literals;

// CPU nanoseconds of this process's threads named `comm` (schedstat's first field), summed.
long long ThreadCpuNs(const std::string& comm) {
  long long total = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string dir = std::string("/proc/self/task/") + e->d_name;
    std::ifstream c(dir + "/comm");
    std::string name;
    std::getline(c, name);
    if (name != comm) continue;
    std::ifstream s(dir + "/schedstat");
    long long ns = 0;
    if (s >> ns) total += ns;
  }
  closedir(d);
  return total;
}

void Spin(std::uint64_t cycles) {
  const std::uint64_t until = junction::sched::Rdtsc() + cycles;
  while (junction::sched::Rdtsc() < until) {
  }
}

// range(0): calls per iteration; range(1): µs of work per call (the call rate: 2 µs ≈ 400k/s,
// a dpdk node's; 8 µs ≈ 110k/s, a kernel node's).
void BM_BillingThreadsPerCall(benchmark::State& state) {
  const auto calls = static_cast<std::uint64_t>(state.range(0));
  const std::uint64_t work = static_cast<std::uint64_t>(junction::sched::NsToCycles(state.range(1) * 1000.0));
  // One runtime core on the first CPU the process may use; the billing threads then take the
  // others (HelperCpus), as on a node.
  const std::vector<int> cpus = junction::sched::AllowedCpus();
  if (cpus.size() < 2) {
    state.SkipWithError("needs two CPUs: one for the runtime core, one for the billing threads");
    return;
  }
  auto rt = junction::sched::Runtime::Create({.cores = {cpus[0]}});
  if (!rt) {
    state.SkipWithError(rt.error().message().c_str());
    return;
  }
  energy::ReplaySensor meter = SteadyPackageMeter(200'000);  // 2 000 s of trace
  const std::string dir = std::filesystem::temp_directory_path() / "faasnode_biller_bench";
  double sampler_ns = 0, writer_ns = 0, spilled = 0, aggregated = 0;
  std::uint64_t seq = 0;
  for (auto _ : state) {
    std::filesystem::remove_all(dir);
    bool ok = true;
    auto ran = (*rt)->Run([&] {
      BillingOptions o;
      o.ledger_path = dir + "/ledger.db";
      o.meter_source = &meter;
      auto b = EnergyBiller::Start(junction::sched::Runtime::Current(), o);
      if (!b) {
        ok = false;
        return;
      }
      EnergyBiller& biller = **b;
      const long long s0 = ThreadCpuNs("faasnode-energy"), w0 = ThreadCpuNs("faasnode-ledger");
      char uuid[junction::kUuidTextSize];
      std::uint8_t bytes[16] = {};
      for (std::uint64_t i = 0; i < calls; ++i) {
        const std::uint64_t t0 = junction::sched::Rdtsc();
        const std::uint64_t account = junction::sched::SequentialAccount(++seq, 0);
        const junction::sched::AccountId before = junction::sched::CurrentAccount();
        junction::sched::SetAccountAt(account, t0);
        const CallCycles cc(t0);
        Spin(work);
        const CallCycles::Result r = cc.End();
        junction::sched::SetAccountAt(before, r.end_tsc);
        std::memcpy(bytes, &seq, sizeof(seq));
        junction::FormatUuid(bytes, uuid);
        biller.Complete({.account = account, .call_id = std::string_view(uuid, sizeof(uuid)), .function = "echo",
                         .ns = "openfaas-fn", .start_ns = static_cast<std::int64_t>(t0),
                         .end_ns = static_cast<std::int64_t>(r.end_tsc), .status = 200, .bytes_in = 5,
                         .bytes_out = 5});
        if (i % 256 == 255) junction::sched::Yield();
      }
      // Until every call is committed (in packs or rows), not counting the later expansion.
      const auto deadline = std::chrono::steady_clock::now() + 30s;
      for (;;) {
        const EnergyBiller::Counters c = biller.counters();
        if (c.ledger_rows + c.ledger_packed + c.ledger_aggregated >= calls) break;
        if (std::chrono::steady_clock::now() > deadline) {
          ok = false;
          break;
        }
        junction::sched::SleepFor(1ms);
      }
      sampler_ns += static_cast<double>(ThreadCpuNs("faasnode-energy") - s0);
      writer_ns += static_cast<double>(ThreadCpuNs("faasnode-ledger") - w0);
      const EnergyBiller::Counters c = biller.counters();
      spilled += static_cast<double>(c.calls_spilled);
      aggregated += static_cast<double>(c.ledger_aggregated);
      if (!biller.Stop()) ok = false;
    });
    if (!ran || !ok) {
      state.SkipWithError("the biller did not start, commit every call in 30 s, or stop");
      break;
    }
  }
  std::filesystem::remove_all(dir);
  const double n = static_cast<double>(calls) * static_cast<double>(state.iterations());
  state.counters["sampler_ns_per_call"] = sampler_ns / n;
  state.counters["writer_ns_per_call"] = writer_ns / n;
  state.counters["spilled"] = spilled;
  state.counters["aggregated"] = aggregated;
}
BENCHMARK(BM_BillingThreadsPerCall)
    ->Args({200'000, 2})
    ->Args({100'000, 8})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace faasnode::billing

BENCHMARK_MAIN();
