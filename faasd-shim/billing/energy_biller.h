// energy_biller.h — turns the runtime's cycle accounts into a joule and carbon bill per
// invocation, written to the SQLite ledger.
//
// A sampler kthread closes a cycle-accounting interval on every core every `interval`
// (Runtime::CloseInterval), takes the interval's joules from the node's meter, shares them by
// cycles (energy::Attributor), prices carbon (energy::CarbonModel), and writes an interval row.
//
// The meter (BillingOptions::meter): RAPL (every package and its core/uncore/dram/psys zones,
// through libpowercap) when the machine has it, the power model otherwise (these VMs); NVML's
// GPU energy counter adds zone `gpu` when libnvidia-ml.so.1 and a Volta+ GPU are present. The
// counters are read right after each close, so each interval's joules are the counter deltas
// between two consecutive closes (contiguous: nothing is lost; aligned to the cycle interval
// to within the close's latency). Every figure carries its source (rapl, nvml, model, replay).
//
// The estimate at completion (EstimateCall, for X-Energy-Joules / X-Carbon-Grams): the call's
// on-CPU cycles × the joules per busy cycle of the last attributed interval (what it billed its
// invocations ÷ their cycles: the meter ÷ all cycles of all cores under the default report-
// apart policy, more when idle or overhead are shared out) and that interval's grams per joule. The ledger row, attributed interval by interval, is
// the final bill; the two differ by how much the power changed since the last interval.
// An invocation reports itself with Complete() when it ends; its bill is final once the
// interval containing its end has been attributed, and its ledger row is written then.
// The node's own work (HTTP parsing, scheduling, polling) is overhead, idle is idle; both
// are reported apart, so invocation joules + idle + overhead = the meter, interval by interval.
//
// Threads: Start/Stop from a uthread of the runtime; Complete from any uthread or thread.
// Complete copies the call into its core's bounded SPSC ring (the core's kthread the only
// producer: uthreads are not preempted, so no two run Complete at once on one core; the sampler
// the only consumer): no lock, no allocation, no system call. A full ring (the sampler has not
// drained it for capacity calls) spills the call into the core's spill vector under the core's
// own spinlock (shared with the sampler only), which may allocate: never dropped, never
// aggregated (a call's bill is found by its account, which an aggregate would lose), and
// counted (counters().calls_spilled, faasnode_billing_calls_spilled_total). Callers off the
// runtime share one ring whose producer side is serialised by that ring's spinlock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "energy/attribution/attribution.h"
#include "energy/carbon/intensity.h"
#include "energy/ledger/ledger.h"
#include "energy/ledger/record.h"
#include "energy/ledger/spsc_queue.h"
#include "energy/sensors/counter.h"
#include "energy/sensors/nvml.h"
#include "energy/sensors/power_model.h"
#include "energy/sensors/rapl.h"
#include "junction/base/error.h"
#include "junction/sched/runtime.h"
#include "junction/sched/spinlock.h"

namespace faasnode::billing {

// The CPUs the sampler and the ledger writer run on: those of the process's CPUs that no
// runtime worker is pinned to, as Junction/Caladan keep their control threads off the data-
// plane cores (a helper sharing a worker's CPU holds it for whole scheduler slices, ms at a
// time, while that worker's requests wait); all of the process's CPUs when the workers hold
// every one of them. Sorted, without duplicates.
std::vector<int> HelperCpus(std::span<const int> process_cpus, std::span<const int> worker_cpus);

// Which meter supplies the joules of the CPU side.
enum class MeterChoice : std::uint8_t {
  kAuto,   // RAPL when /sys/class/powercap/intel-rapl is readable, else the power model
  kRapl,   // RAPL or fail at start (kUnavailable / kIo)
  kModel,  // the power model even where RAPL exists
};
// Whether NVML's GPU energy adds zone `gpu`.
enum class GpuMeterChoice : std::uint8_t {
  kAuto,  // when libnvidia-ml.so.1 loads and a GPU has an energy counter
  kNvml,  // or fail at start
  kOff,
};

// The estimate at completion of one call (see the file comment).
struct CallEstimate {
  double joules = 0.0;
  double grams = 0.0;
  energy::SourceSet sources;
  // How the grams' intensity was obtained (that of the last priced interval): measured (a
  // trace row), interpolated or held (a trace gap, per BillingOptions::carbon_gaps), or a
  // constant. The invoke route sends it as X-Carbon-Intensity-Kind, in the ledger's words.
  energy::carbon::IntensityKind intensity_kind = energy::carbon::IntensityKind::kConstant;
};

struct BillingOptions {
  std::chrono::milliseconds interval{10};
  bool response_headers = true;  // X-Energy-Joules / X-Carbon-Grams on every invocation reply
  // Whether idle (static) power and the node's overhead are shared out to the interval's
  // invocations by their busy cycles, or reported apart (the default: a bill then covers the
  // call's own cycles only).
  energy::AttributionOptions attribution;
  MeterChoice meter = MeterChoice::kAuto;
  GpuMeterChoice gpu = GpuMeterChoice::kAuto;
  // Tests and re-billing: this counter source (borrowed, read only by the sampler until Stop)
  // is the meter instead of RAPL/NVML/model.
  energy::CounterSource* meter_source = nullptr;
  // Bounded queues: finished calls per core (Complete's ring; past it, the spill), and ledger
  // rows (past it, the ledger's overflow aggregates). Power-of-two rounded.
  std::size_t call_queue_capacity = 4096;
  std::size_t ledger_queue_capacity = 16384;
  // Called on the sampler thread with the ledger rows of each attributed interval, in order,
  // in one to a few runs per interval (the rows as they lie in the ledger's ring, before it
  // takes them; a row that found the ring full comes alone), for example to sum Prometheus
  // series: a lock per run, not per call. Not called when there were none. Must not block
  // for long.
  std::function<void(std::span<const energy::InvocationRecord>)> on_bills;
  // Called on the sampler thread with every closed cycle-accounting interval (for example
  // metrics::CycleTotals::Observe: the biller is then the runtime's only interval reader).
  std::function<void(const junction::sched::IntervalSnapshot&)> on_interval;
  std::string ledger_path;                 // created with its directory if absent
  double carbon_g_per_kwh = 400.0;         // used when carbon_trace is empty
  std::string carbon_trace;                // CSV (timestamp, gCO2e/kWh)
  // How the trace's gaps are filled; each row's intensity_kind says which one it got.
  energy::carbon::GapPolicy carbon_gaps = energy::carbon::GapPolicy::kInterpolate;
  // Embodied gCO2e per core-second of an invocation (its cycles as a share of each core's
  // interval time, summed); 0: none.
  double embodied_g_per_core_second = 0.0;
  energy::PowerModelOptions model;
};

// What the invocation path knows when a call ends. `function` and `ns` are views: they must
// stay valid until the biller is stopped (the deployed pool's name and a constant do).
// `call_id` is copied by Complete (up to 64 bytes), so it need outlive the call only.
struct CompletedCall {
  std::uint64_t account = 0;  // the cycle account the call ran under
  std::string_view call_id;
  std::string_view function;
  std::string_view ns;
  std::int64_t start_ns = 0;  // unix ns
  std::int64_t end_ns = 0;
  int status = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  // Energy the function measured itself (SDK v2 report_energy: NVML GPU joules). Each zone
  // present replaces the row's cycle share of that zone (if the meter has it) and is priced at
  // the carbon intensity over [start_ns, end_ns]; its sources join the row's. Absent zones stay
  // absent (a CPU-only call has no gpu figure, not a zero).
  energy::ZoneJoules measured;
};

class EnergyBiller {
 public:
  // Opens the ledger and starts the sampler. Errors: bad options, the ledger's open errors,
  // an unreadable carbon trace.
  static junction::Status<std::unique_ptr<EnergyBiller>> Start(junction::sched::Runtime* rt,
                                                              const BillingOptions& options);
  ~EnergyBiller();

  // Queues a finished call for billing. Never blocks for long; allocates nothing unless the
  // core's ring is full (see the file comment).
  void Complete(const CompletedCall& call);

  // Bills every call completed so far (closing one last interval), commits them and closes the
  // ledger (packs expanded for up to its close_expand_budget). Idempotent. Uthread only (it
  // waits for the sampler).
  junction::Status<void> Stop();

  // The estimate at completion for a call that ran `cycles` on-CPU cycles under its account.
  // Any thread; lock-free (four relaxed loads).
  CallEstimate EstimateCall(std::uint64_t cycles) const;
  bool response_headers() const { return options_.response_headers; }

  // The meter in words, e.g. "rapl (2 packages: package, core, dram)" or "power model (0.74 W
  // idle / 3.5 W max per core)", plus "+ nvml (1 GPU)".
  const std::string& meter_description() const { return meter_description_; }
  // The sources the meter labels its figures with.
  energy::SourceSet meter_sources() const { return meter_sources_; }

  const energy::OpenReport& ledger_report() const { return ledger_->open_report(); }
  // Counts for /metrics and the logs; any thread (takes the ledger's stats lock).
  struct Counters {
    std::uint64_t calls_spilled = 0;       // Complete found its core's ring full
    std::uint64_t ledger_rows = 0;         // invocation rows committed to the ledger
    std::uint64_t ledger_packed = 0;       // records committed in packs (the writer was behind)
    std::uint64_t ledger_packs_pending = 0;  // pack rows not expanded into invocation rows yet
    std::uint64_t ledger_aggregated = 0;   // rows folded into overflow aggregates (queue full)
    std::uint64_t ledger_rows_lost = 0;    // rows lost in crashes, as detected at open (all)
  };
  Counters counters() const;
  std::uint64_t intervals() const { return intervals_.load(std::memory_order_relaxed); }

 private:
  EnergyBiller(junction::sched::Runtime* rt, const BillingOptions& options);
  void SamplerLoop();
  junction::Status<void> Step(bool final_step);
  // Step's work on the calls it gathered in calls_: closes an interval, attributes it and
  // queues every call's row; `billed` says whether the rows were queued (else the calls wait).
  junction::Status<void> BillCalls(bool final_step, bool& billed);
  std::int64_t TscToUnixNs(std::uint64_t tsc) const;

  junction::sched::Runtime* rt_;
  BillingOptions options_;
  std::unique_ptr<energy::Ledger> ledger_;
  std::unique_ptr<energy::carbon::CarbonModel> carbon_;
  junction::Status<void> OpenMeter();
  junction::Status<energy::IntervalEnergy> ReadMeter(std::int64_t begin_ns, std::int64_t end_ns,
                                                     std::span<const energy::CoreIntervalCycles> cores);

  std::unique_ptr<energy::PowerModel> model_;      // null when a counter meters the CPU side
  std::unique_ptr<energy::RaplSensor> rapl_;
  std::unique_ptr<energy::NvmlSensor> nvml_;
  std::vector<energy::CounterSource*> counters_;  // rapl_/nvml_/meter_source, read in order
  energy::IntervalMeter counter_meter_;
  std::string meter_description_;
  energy::SourceSet meter_sources_;
  // Cycles of intervals whose meter read failed: merged into the next interval (its joules
  // then cover both), so no cycle and no joule is lost.
  std::vector<energy::CoreIntervalCycles> carried_;
  std::uint64_t carried_begin_tsc_ = 0;
  // The last attributed interval's rates, for EstimateCall (written by the sampler only).
  std::atomic<double> joules_per_cycle_{0.0};
  std::atomic<double> grams_per_joule_{0.0};
  std::atomic<std::uint8_t> rate_sources_{0};
  std::atomic<energy::carbon::IntensityKind> rate_kind_{energy::carbon::IntensityKind::kConstant};
  energy::Attributor attributor_;
  std::unique_ptr<energy::BillBook> book_;

  // A finished call as queued: trivially copyable, no heap (the views as CompletedCall's).
  struct PendingCall {
    std::uint64_t account = 0;
    energy::FixedString<64> call_id;
    std::string_view function;
    std::string_view ns;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    int status = 0;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
    energy::ZoneJoules measured;
  };
  struct alignas(64) CoreQueue {
    explicit CoreQueue(std::size_t capacity) : ring(capacity) {}
    energy::SpscQueue<PendingCall> ring;  // producer: the core's kthread; consumer: the sampler
    junction::sched::Spinlock lock;       // the spill; the off-runtime queue's producers too
    std::vector<PendingCall> spill;       // under lock: calls that found the ring full
    std::vector<PendingCall> drained;     // sampler only: swapped with spill under the lock, so
                                          // the lock is held O(1) and both keep their capacity
    std::size_t peeked = 0;               // sampler only: ring calls in this step's calls_
    std::atomic<std::uint64_t> spilled{0};
  };
  void LogOverflow(bool final_log);
  std::vector<std::unique_ptr<CoreQueue>> queues_;  // one per core, + one for callers off it
  std::vector<PendingCall> waiting_;   // sampler only: left by a failed step, not billed yet
  std::vector<const PendingCall*> calls_;  // sampler only: this step's calls (waiting_, the
                                           // rings' slots, the drained spills), oldest first
  std::vector<std::uint64_t> finishing_;          // sampler only: calls_'s accounts
  std::vector<std::optional<energy::Bill>> bills_;  // sampler only: their bills (AddAndTake)
  Counters logged_;                    // sampler only: the counts last logged
  std::chrono::steady_clock::time_point next_overflow_log_{};

  std::uint64_t tsc0_ = 0;
  std::int64_t unix0_ns_ = 0;
  double tsc_hz_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> intervals_{0};
  std::vector<int> cpus_;  // HelperCpus(): for the sampler and the ledger writer
  std::thread sampler_;
  std::string last_error_;
};

}  // namespace faasnode::billing
