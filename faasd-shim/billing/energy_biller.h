// energy_biller.h — turns the runtime's cycle accounts into a joule and carbon bill per
// invocation, written to the SQLite ledger.
//
// A sampler kthread closes a cycle-accounting interval on every core every `interval`
// (Runtime::CloseInterval), estimates the interval's joules (the power model: these VMs have
// no RAPL; the RAPL and NVML sensors in energy/sensors are not wired in yet), shares them by
// cycles (energy::Attributor), prices carbon (energy::CarbonModel), and writes an interval row.
// An invocation reports itself with Complete() when it ends; its bill is final once the
// interval containing its end has been attributed, and its ledger row is written then.
// The node's own work (HTTP parsing, scheduling, polling) is overhead, idle is idle; both
// are reported apart, so invocation joules + idle + overhead = the meter, interval by interval.
//
// Threads: Start/Stop from a uthread of the runtime; Complete from any uthread (it takes the
// calling core's own spinlock only, which the sampler takes once per interval).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "energy/attribution/attribution.h"
#include "energy/carbon/intensity.h"
#include "energy/ledger/ledger.h"
#include "energy/sensors/power_model.h"
#include "junction/base/error.h"
#include "junction/sched/runtime.h"
#include "junction/sched/spinlock.h"

namespace faasnode::billing {

struct BillingOptions {
  std::chrono::milliseconds interval{10};
  std::string ledger_path;                 // created with its directory if absent
  double carbon_g_per_kwh = 400.0;         // used when carbon_trace is empty
  std::string carbon_trace;                // CSV (timestamp, gCO2e/kWh); gaps interpolated
  energy::PowerModelOptions model;
};

// What the invocation path knows when a call ends. `function` and `ns` are views: they must
// stay valid until the biller is stopped (the deployed pool's name and a constant do).
struct CompletedCall {
  std::uint64_t account = 0;  // the cycle account the call ran under
  std::string call_id;
  std::string_view function;
  std::string_view ns;
  std::int64_t start_ns = 0;  // unix ns
  std::int64_t end_ns = 0;
  int status = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
};

class EnergyBiller {
 public:
  // Opens the ledger and starts the sampler. Errors: bad options, the ledger's open errors,
  // an unreadable carbon trace.
  static junction::Status<std::unique_ptr<EnergyBiller>> Start(junction::sched::Runtime* rt,
                                                              const BillingOptions& options);
  ~EnergyBiller();

  // Queues a finished call for billing. Never blocks for long; allocates (the strings).
  void Complete(CompletedCall call);

  // Bills every call completed so far (closing one last interval), flushes and closes the
  // ledger. Idempotent. Uthread only (it waits for the sampler).
  junction::Status<void> Stop();

  const energy::OpenReport& ledger_report() const { return ledger_->open_report(); }
  std::uint64_t intervals() const { return intervals_.load(std::memory_order_relaxed); }

 private:
  EnergyBiller(junction::sched::Runtime* rt, const BillingOptions& options);
  void SamplerLoop();
  junction::Status<void> Step(bool final_step);
  std::int64_t TscToUnixNs(std::uint64_t tsc) const;

  junction::sched::Runtime* rt_;
  BillingOptions options_;
  std::unique_ptr<energy::Ledger> ledger_;
  std::unique_ptr<energy::carbon::CarbonModel> carbon_;
  std::unique_ptr<energy::PowerModel> model_;
  energy::Attributor attributor_;
  std::unique_ptr<energy::BillBook> book_;

  struct alignas(64) CoreQueue {
    junction::sched::Spinlock lock;
    std::vector<CompletedCall> calls;
  };
  std::vector<CoreQueue> queues_;        // one per core, plus one for callers off the runtime
  std::vector<CompletedCall> waiting_;   // sampler only: completed, interval not closed yet

  std::uint64_t tsc0_ = 0;
  std::int64_t unix0_ns_ = 0;
  double tsc_hz_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> intervals_{0};
  std::thread sampler_;
  std::string last_error_;
};

}  // namespace faasnode::billing
