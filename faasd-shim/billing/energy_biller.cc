// energy_biller.cc — the sampler: close intervals, estimate joules, attribute, price, record.
#include "faasd-shim/billing/energy_biller.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace faasnode::billing {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;
namespace accounts = junction::sched::accounts;

std::vector<int> HelperCpus(std::span<const int> process_cpus, std::span<const int> worker_cpus) {
  std::vector<int> all(process_cpus.begin(), process_cpus.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<int> free;
  for (int c : all) {
    if (std::find(worker_cpus.begin(), worker_cpus.end(), c) == worker_cpus.end()) free.push_back(c);
  }
  return free.empty() ? all : free;
}

namespace {

std::int64_t UnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}
// Puts a call's self-measured zones into its row (see CompletedCall::measured).
Status<void> AddMeasured(const energy::carbon::CarbonModel& carbon, const energy::ZoneJoules& measured,
                         std::int64_t start_ns, std::int64_t end_ns, energy::InvocationRecord& rec) {
  const double before_j = rec.joules.NodeTotal().value;
  for (energy::Zone z : energy::kAllZones) {
    if (measured.Has(z)) rec.joules.Set(z, measured[z]);
  }
  rec.joules.sources.Add(measured.sources);
  const double delta_j = rec.joules.NodeTotal().value - before_j;
  if (delta_j == 0) return {};
  auto price = carbon.PriceInterval(energy::Joules{std::abs(delta_j)}, start_ns,
                                    std::max(end_ns, start_ns + 1), 0.0);
  if (!price) return std::unexpected(price.error());
  rec.grams += delta_j > 0 ? price->grams : -price->grams;
  const double total_j = before_j + delta_j;
  if (total_j > 0) {
    rec.intensity_g_per_kwh =
        (rec.intensity_g_per_kwh * before_j + price->intensity.g_per_kwh * delta_j) / total_j;
  }
  return {};
}

}  // namespace

EnergyBiller::EnergyBiller(junction::sched::Runtime* rt, const BillingOptions& options)
    : rt_(rt), options_(options), attributor_(options.attribution) {
  for (int i = 0; i <= rt->num_cores(); ++i) {
    queues_.push_back(std::make_unique<CoreQueue>(options.call_queue_capacity));
  }
}

Status<std::unique_ptr<EnergyBiller>> EnergyBiller::Start(junction::sched::Runtime* rt,
                                                          const BillingOptions& options) {
  if (options.interval < std::chrono::milliseconds(1)) {
    return MakeError(ErrorCode::kInvalidArgument, "energy.interval_ms: below 1 ms; use 10 (the default) or more");
  }
  if (options.call_queue_capacity == 0 || options.ledger_queue_capacity == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "energy: call_queue_capacity and ledger_queue_capacity must be > 0");
  }
  std::unique_ptr<EnergyBiller> b(new EnergyBiller(rt, options));
  if (auto m = b->OpenMeter(); !m) return std::unexpected(m.error());
  auto source = options.carbon_trace.empty()
                    ? energy::carbon::IntensitySource::Constant(options.carbon_g_per_kwh)
                    : energy::carbon::IntensitySource::FromCsvFile(
                          options.carbon_trace,
                          {.gaps = options.carbon_gaps,
                           .out_of_range = energy::carbon::OutOfRangePolicy::kRepeat});
  if (!source) return std::unexpected(source.error());
  auto carbon = energy::carbon::CarbonModel::Create(
      std::move(*source), {.embodied_g_per_core_second = options.embodied_g_per_core_second});
  if (!carbon) return std::unexpected(carbon.error());
  b->carbon_ = std::make_unique<energy::carbon::CarbonModel>(std::move(*carbon));
  b->book_ = std::make_unique<energy::BillBook>(b->carbon_.get());
  const std::filesystem::path dir = std::filesystem::path(options.ledger_path).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return MakeError(ErrorCode::kIo, fmt::format("energy.ledger: cannot create {}: {}", dir.string(), ec.message()));
    }
  }
  // The sampler and the ledger writer are started from a pinned worker: they would inherit
  // its CPU. Give them the process's CPUs that no worker holds.
  // The process's CPUs are the main thread's (the runtime pins only its workers).
  const std::vector<int> process_cpus = junction::sched::AllowedCpus(getpid());
  b->cpus_ = HelperCpus(process_cpus, rt->config().cores);
  spdlog::info("energy: sampler and ledger writer on CPU(s) {}{}", fmt::join(b->cpus_, ","),
               b->cpus_.size() < process_cpus.size() ? " (none of the runtime's worker CPUs)"
                                                     : " (shared with the runtime's workers: the "
                                                       "process has no CPU that is not a worker's)");
  auto ledger = energy::Ledger::Open({.path = options.ledger_path,
                                      .producers = 1,
                                      .queue_capacity = options.ledger_queue_capacity,
                                      .writer_cpus = b->cpus_});
  if (!ledger) return std::unexpected(ledger.error());
  b->ledger_ = std::move(*ledger);
  const energy::OpenReport& opened = b->ledger_->open_report();
  if (opened.rows_lost > 0) {
    spdlog::warn("energy ledger {}: {} invocation row(s) were lost in a crash before this start",
                 options.ledger_path, opened.rows_lost);
  } else if (opened.next_seq > 1) {
    // Said on every start of an existing ledger, so "nothing lost" is a statement, not silence.
    // (Calls that ended in the last interval before a crash had no row number yet: not counted.)
    spdlog::info("energy ledger {}: {} invocation row(s), {} aggregated; none lost before this start",
                 options.ledger_path, opened.rows, opened.aggregated);
  }
  if (opened.packed > 0) {
    spdlog::info("energy ledger {}: {} call(s) kept in packs before this start are expanded into invocation "
                 "rows while the node has slack",
                 options.ledger_path, opened.packed);
  }
  // The runtime's intervals are in TSC; the ledger's times in unix ns.
  b->tsc_hz_ = junction::sched::TscHz();
  b->tsc0_ = junction::sched::Rdtsc();
  b->unix0_ns_ = UnixNs();
  // Start from a fresh interval so the first one does not span the node's whole start-up,
  // and take the counters' baseline at that close.
  if (auto first = rt->CloseInterval(); !first) return std::unexpected(first.error());
  if (!b->counters_.empty()) {
    auto base = b->ReadMeter(0, 0, {});
    if (!base) return std::unexpected(base.error());
  }
  // Until the first interval is attributed, estimates use the power model at full load.
  if (b->model_ != nullptr) {
    b->joules_per_cycle_.store(options.model.max_per_core.value / b->tsc_hz_, std::memory_order_relaxed);
    b->rate_sources_.store(energy::SourceSet(energy::Source::kModel).bits(), std::memory_order_relaxed);
  }
  if (auto unit = b->carbon_->PriceInterval(energy::Joules{1.0}, b->unix0_ns_, b->unix0_ns_ + 1, 0.0)) {
    b->grams_per_joule_.store(unit->grams, std::memory_order_relaxed);
    b->rate_kind_.store(unit->intensity.kind, std::memory_order_relaxed);
  }
  b->sampler_ = std::thread([p = b.get()] { p->SamplerLoop(); });
  return b;
}

EnergyBiller::~EnergyBiller() {
  stop_.store(true);
  if (sampler_.joinable()) sampler_.join();
}

std::int64_t EnergyBiller::TscToUnixNs(std::uint64_t tsc) const {
  const double delta = static_cast<double>(static_cast<std::int64_t>(tsc - tsc0_));
  return unix0_ns_ + static_cast<std::int64_t>(delta * 1e9 / tsc_hz_);
}

Status<void> EnergyBiller::OpenMeter() {
  std::vector<std::string> parts;
  if (options_.meter_source != nullptr) {
    counters_.push_back(options_.meter_source);
    meter_sources_.Add(options_.meter_source->source());
    parts.push_back(fmt::format("{} (a counter source given by the caller)",
                                energy::SourceName(options_.meter_source->source())));
  } else {
    if (options_.meter != MeterChoice::kModel) {
      auto rapl = energy::RaplSensor::Open();
      if (rapl) {
        rapl_ = std::make_unique<energy::RaplSensor>(std::move(*rapl));
        counters_.push_back(rapl_.get());
        meter_sources_.Add(energy::Source::kRapl);
        std::vector<std::string> zones;
        std::uint32_t domains = 0;
        for (const auto& z : rapl_->zones()) {
          domains = std::max(domains, z.domain + 1);
          const std::string name(energy::ZoneName(z.zone));
          if (std::find(zones.begin(), zones.end(), name) == zones.end()) zones.push_back(name);
        }
        parts.push_back(fmt::format("rapl ({} package(s): {})", domains, fmt::join(zones, ", ")));
      } else if (options_.meter == MeterChoice::kRapl) {
        return MakeError(rapl.error().code(),
                         fmt::format("energy.meter = \"rapl\": {}; set meter = \"auto\" or \"model\"",
                                     rapl.error().message()));
      } else {
        spdlog::info("energy: no RAPL counters ({}); using the power model", rapl.error().message());
      }
    }
    if (rapl_ == nullptr) {
      auto model = energy::PowerModel::Create(options_.model);
      if (!model) return std::unexpected(model.error());
      model_ = std::make_unique<energy::PowerModel>(*model);
      meter_sources_.Add(energy::Source::kModel);
      parts.push_back(fmt::format("power model ({} W idle / {} W max per core)", options_.model.idle_per_core.value,
                                  options_.model.max_per_core.value));
    }
    if (options_.gpu != GpuMeterChoice::kOff) {
      auto gpu = energy::NvmlSensor::Open();
      if (gpu) {
        nvml_ = std::make_unique<energy::NvmlSensor>(std::move(*gpu));
        counters_.push_back(nvml_.get());
        meter_sources_.Add(energy::Source::kNvml);
        parts.push_back(fmt::format("nvml ({} GPU(s), zone gpu)", nvml_->device_count()));
      } else if (options_.gpu == GpuMeterChoice::kNvml) {
        return MakeError(gpu.error().code(),
                         fmt::format("energy.gpu_meter = \"nvml\": {}; set gpu_meter = \"auto\" or \"off\"",
                                     gpu.error().message()));
      }
    }
  }
  meter_description_ = fmt::format("{}", fmt::join(parts, " + "));
  return {};
}

Status<energy::IntervalEnergy> EnergyBiller::ReadMeter(std::int64_t begin_ns, std::int64_t end_ns,
                                                       std::span<const energy::CoreIntervalCycles> cores) {
  energy::IntervalEnergy out;
  if (model_ != nullptr) out = model_->Estimate(begin_ns, end_ns, cores);
  out.begin_ns = begin_ns;
  out.end_ns = end_ns;
  if (counters_.empty()) return out;
  energy::CounterSnapshot snap;
  snap.timestamp_ns = UnixNs();
  for (energy::CounterSource* c : counters_) {
    auto r = c->Read();
    if (!r) return std::unexpected(r.error());
    snap.readings.insert(snap.readings.end(), r->readings.begin(), r->readings.end());
  }
  auto delta = counter_meter_.Add(snap);
  if (!delta) return std::unexpected(delta.error());
  if (*delta) {
    out.joules.AddScaled((*delta)->joules, 1.0);
    out.wraps = (*delta)->wraps;
  }
  return out;
}

CallEstimate EnergyBiller::EstimateCall(std::uint64_t cycles) const {
  CallEstimate e;
  e.joules = static_cast<double>(cycles) * joules_per_cycle_.load(std::memory_order_relaxed);
  e.grams = e.joules * grams_per_joule_.load(std::memory_order_relaxed);
  e.sources = energy::SourceSet::FromBits(rate_sources_.load(std::memory_order_relaxed));
  e.intensity_kind = rate_kind_.load(std::memory_order_relaxed);
  return e;
}

void EnergyBiller::Complete(const CompletedCall& call) {
  // Written straight into the ring's slot (no copy of the ~200-byte record on the data path);
  // every field is set, as the slot holds an older call.
  auto fill = [&call](PendingCall& p) {
    p.account = call.account;
    p.call_id.Assign(call.call_id);  // a UUID: 36 bytes
    p.function = call.function;
    p.ns = call.ns;
    p.start_ns = call.start_ns;
    p.end_ns = call.end_ns;
    p.status = call.status;
    p.bytes_in = call.bytes_in;
    p.bytes_out = call.bytes_out;
    p.measured = call.measured;
  };
  // The sampler is behind by a whole ring: keep the call (its bill is found by its account).
  // The caller holds q.lock.
  auto spill = [&fill](CoreQueue& q) {
    PendingCall p;
    fill(p);
    q.spill.push_back(p);
    q.spilled.fetch_add(1, std::memory_order_relaxed);
  };
  const int core = junction::sched::CurrentCore();
  if (core < 0) {
    // Off the runtime: any thread may call; the lock makes them one producer at a time.
    CoreQueue& q = *queues_.back();
    std::lock_guard<junction::sched::Spinlock> l(q.lock);
    if (!q.ring.TryPushWith(fill)) spill(q);
    return;
  }
  CoreQueue& q = *queues_[static_cast<std::size_t>(core)];
  if (q.ring.TryPushWith(fill)) return;
  std::lock_guard<junction::sched::Spinlock> l(q.lock);
  spill(q);
}

EnergyBiller::Counters EnergyBiller::counters() const {
  Counters c;
  for (const auto& q : queues_) c.calls_spilled += q->spilled.load(std::memory_order_relaxed);
  const energy::LedgerStats s = ledger_->stats();
  c.ledger_rows = s.rows_written;
  c.ledger_packed = s.records_packed;
  c.ledger_packs_pending = s.packs_pending;
  c.ledger_aggregated = s.overflowed;
  c.ledger_rows_lost = ledger_->open_report().rows_lost_total;
  return c;
}

// Says, at most once a second (and once more at Stop), how many calls or rows took the slow
// path since the last time: a sign the sampler or the ledger writer cannot keep up.
void EnergyBiller::LogOverflow(bool final_log) {
  const auto now = std::chrono::steady_clock::now();
  if (!final_log && now < next_overflow_log_) return;
  next_overflow_log_ = now + std::chrono::seconds(1);
  const Counters c = counters();
  if (c.ledger_aggregated != logged_.ledger_aggregated) {
    spdlog::warn("energy ledger {}: {} invocation row(s) aggregated (queue full; {} in all): summed "
                 "per function in overflow_aggregates, not lost",
                 options_.ledger_path, c.ledger_aggregated - logged_.ledger_aggregated, c.ledger_aggregated);
  }
  if (c.calls_spilled != logged_.calls_spilled) {
    // Not necessarily a late sampler: it takes a core's calls once per interval, so a core
    // completing more calls per interval than its ring holds spills some on time too.
    const std::size_t ring = queues_.front()->ring.capacity();
    const double per_second = static_cast<double>(ring) * 1000.0 / static_cast<double>(options_.interval.count());
    spdlog::warn("energy: {} finished call(s) found their core's billing ring full ({} in all): kept, in the "
                 "core's spill list (slower, may allocate). A ring holds {} calls and the sampler empties it "
                 "once per {} ms interval: a core past ~{:.0f} calls/s spills some, or the sampler is late",
                 c.calls_spilled - logged_.calls_spilled, c.calls_spilled, ring, options_.interval.count(),
                 per_second);
  }
  logged_ = c;
}

void EnergyBiller::SamplerLoop() {
  pthread_setname_np(pthread_self(), "faasnode-energy");
  if (!cpus_.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus_) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: a hint
  }
  while (!stop_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(options_.interval);
    if (stop_.load(std::memory_order_acquire)) break;
    if (auto s = Step(false); !s && s.error().message() != last_error_) {
      last_error_ = s.error().message();
      spdlog::warn("energy: {}", last_error_);
    }
    LogOverflow(false);
  }
}

Status<void> EnergyBiller::Step(bool final_step) {
  // Calls completed before this close end inside the interval it closes (or earlier ones):
  // they are billed with it, together with those an earlier failed step left waiting. The
  // rings' calls are read where they lie (their ~200 bytes not copied out) and freed once their
  // rows are queued; a step that fails keeps them all in waiting_ for the next one.
  calls_.clear();
  for (const PendingCall& c : waiting_) calls_.push_back(&c);
  for (auto& qp : queues_) {
    CoreQueue& q = *qp;
    q.peeked = q.ring.PeekUpTo(SIZE_MAX, [this](const PendingCall& c) { calls_.push_back(&c); });
    q.drained.clear();
    {
      std::lock_guard<junction::sched::Spinlock> l(q.lock);
      q.spill.swap(q.drained);
    }
    for (const PendingCall& c : q.drained) calls_.push_back(&c);
  }
  bool billed = false;
  Status<void> result = BillCalls(final_step, billed);
  if (billed) {
    for (auto& qp : queues_) qp->ring.Drop(qp->peeked);
    waiting_.clear();
  } else {
    // calls_ points into waiting_: append to it only after the last use of those pointers.
    for (auto& qp : queues_) {
      qp->ring.PopInto(waiting_, qp->peeked);
      waiting_.insert(waiting_.end(), qp->drained.begin(), qp->drained.end());
      qp->drained.clear();
    }
  }
  calls_.clear();
  return result;
}

Status<void> EnergyBiller::BillCalls(bool final_step, bool& billed) {
  auto snap = rt_->CloseInterval(std::chrono::milliseconds(final_step ? 2000 : 200));
  if (!snap) return std::unexpected(snap.error());  // not lost: billed after the next close
  if (options_.on_interval) options_.on_interval(*snap);
  std::vector<energy::CoreIntervalCycles> cores;
  cores.reserve(snap->cores.size());
  std::uint64_t begin_tsc = UINT64_MAX, end_tsc = 0;
  for (const auto& c : snap->cores) {
    energy::CoreIntervalCycles e;
    e.core = static_cast<std::uint32_t>(c.core);
    e.tsc_begin = c.tsc_begin;
    e.tsc_end = c.tsc_end;
    e.idle_cycles = c.idle;
    e.overhead_cycles = c.runtime + c.poll;
    e.busy.reserve(c.busy.size());
    for (const auto& a : c.busy) {
      if (a.account >= accounts::kFirstUser) {
        e.busy.push_back({a.account, a.cycles});
      } else {
        e.overhead_cycles += a.cycles;  // kNet and other runtime classes
      }
    }
    begin_tsc = std::min(begin_tsc, c.tsc_begin);
    end_tsc = std::max(end_tsc, c.tsc_end);
    cores.push_back(std::move(e));
  }
  if (!carried_.empty()) {
    // The previous meter read failed: this interval's joules cover that one's cycles too.
    begin_tsc = std::min(begin_tsc, carried_begin_tsc_);
    for (energy::CoreIntervalCycles& c : cores) {
      for (const energy::CoreIntervalCycles& old : carried_) {
        if (old.core != c.core) continue;
        c.tsc_begin = std::min(c.tsc_begin, old.tsc_begin);
        c.idle_cycles += old.idle_cycles;
        c.overhead_cycles += old.overhead_cycles;
        c.busy.insert(c.busy.end(), old.busy.begin(), old.busy.end());
      }
    }
  }
  const std::int64_t begin_ns = TscToUnixNs(begin_tsc);
  const std::int64_t end_ns = TscToUnixNs(end_tsc);
  auto meter = ReadMeter(begin_ns, end_ns, cores);
  if (!meter) {
    if (carried_.empty()) carried_begin_tsc_ = begin_tsc;
    carried_ = std::move(cores);
    return std::unexpected(meter.error());
  }
  carried_.clear();
  auto attribution = attributor_.Attribute(*meter, cores);
  if (!attribution) return std::unexpected(attribution.error());
  // Every waiting call ended before this close: its bill is final with this interval.
  finishing_.clear();
  for (const PendingCall* c : calls_) finishing_.push_back(c->account);
  // Joules are added even if pricing failed.
  energy::ZoneJoules invocation_total;  // AddAndTake's pass sums it
  Status<void> priced = book_->AddAndTake(*attribution, finishing_, bills_, &invocation_total);
  energy::IntervalRecord interval = energy::IntervalRecord::From(*attribution, invocation_total);
  if (auto unit = carbon_->PriceInterval(energy::Joules{1.0}, begin_ns, end_ns, 0.0)) {
    interval.Price(unit->intensity.g_per_kwh);
    grams_per_joule_.store(unit->grams, std::memory_order_relaxed);
    rate_kind_.store(unit->intensity.kind, std::memory_order_relaxed);
  }
  const std::uint64_t all_cycles = attribution->busy_cycles + attribution->idle_cycles +
                                   attribution->overhead_cycles + attribution->unaccounted_cycles;
  // The rate this interval billed its invocations per busy cycle (with shared-out classes
  // included); with no invocation, the report-apart rate (meter ÷ all cycles).
  const double rate = attribution->busy_cycles > 0
                          ? invocation_total.NodeTotal().value /
                                static_cast<double>(attribution->busy_cycles)
                          : attribution->meter.NodeTotal().value / static_cast<double>(all_cycles);
  if (all_cycles > 0) {
    joules_per_cycle_.store(rate, std::memory_order_relaxed);
    rate_sources_.store(attribution->meter.sources.bits(), std::memory_order_relaxed);
  }
  // The waiting calls' bills go back to the book when they are not written now: a retry
  // (the next step) takes them again.
  auto put_back_from = [&](size_t first) {
    for (size_t j = first; j < bills_.size(); ++j) {
      if (bills_[j]) book_->PutBack(std::move(*bills_[j]));
    }
  };
  if (auto s = ledger_->PushInterval(interval); !s) {
    put_back_from(0);
    return s;
  }
  intervals_.fetch_add(1, std::memory_order_relaxed);
  // Each call's row is built where it lies in the ledger's ring (PushMany: no staging copy),
  // and the Prometheus totals read it there before it is published. A slot holds an older
  // row, so every field is set below.
  static_assert(sizeof(energy::InvocationRecord) == 344,
                "InvocationRecord changed: set its new fields in `build` (a ring slot is not cleared)");
  auto build = [&](std::span<energy::InvocationRecord> out, size_t first) {
    for (size_t k = 0; k < out.size(); ++k) {
      const PendingCall& c = *calls_[first + k];
      energy::InvocationRecord& rec = out[k];
      rec.call_id.Assign(c.call_id.view());
      rec.function.Assign(c.function);
      rec.ns.Assign(c.ns);
      rec.start_ns = c.start_ns;
      rec.end_ns = c.end_ns;
      rec.status = c.status;
      rec.bytes_in = c.bytes_in;
      rec.bytes_out = c.bytes_out;
      static const energy::Bill kNothing;  // zero cycles, joules, grams
      const std::optional<energy::Bill>& bill = bills_[first + k];
      rec.FillFromBill(bill ? *bill : kNothing);
      if (!bill) {
        // It ran no cycle under its own account (nothing to bill): a zero row, labelled with
        // the meter's sources.
        rec.joules.Set(energy::Zone::kPackage, energy::Joules{0.0});
        rec.joules.sources.Add(meter_sources_);
      }
      if (c.measured.present != 0) {
        if (auto m = AddMeasured(*carbon_, c.measured, c.start_ns, c.end_ns, rec); !m && priced) priced = m;
      }
    }
    if (options_.on_bills) options_.on_bills(out);
  };
  if (auto p = ledger_->PushMany(0, calls_.size(), build); !p) {
    // Nothing was queued (the ledger is closed): the bills go back for a retry.
    put_back_from(0);
    return std::unexpected(p.error());
  }
  billed = true;
  return priced;
}

Status<void> EnergyBiller::Stop() {
  if (stopped_.exchange(true)) return {};
  stop_.store(true, std::memory_order_release);
  if (sampler_.joinable()) sampler_.join();
  // The last calls and cycles are billed here or never: a step that could not (its meter read
  // failed, so calls wait and the interval's cycles are carried) is tried twice more.
  Status<void> last = Step(true);
  for (int retry = 0; retry < 2 && !last && (!waiting_.empty() || !carried_.empty()); ++retry) {
    last = Step(true);
  }
  LogOverflow(true);
  // Close, not Flush: Close bounds how long it expands packs (a node busy for hours must not
  // take as long to stop); what it leaves is committed, counted by the reports, and expanded
  // after the next start.
  if (auto c = ledger_->Close(); !c && last) last = c;
  if (const std::uint64_t left = ledger_->stats().packs_pending; left > 0) {
    spdlog::info("energy ledger {}: {} pack(s) of calls left unexpanded at shutdown (committed and counted by "
                 "the reports; the next start turns them into invocation rows)",
                 options_.ledger_path, left);
  }
  return last;
}

}  // namespace faasnode::billing
