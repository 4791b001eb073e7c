// energy_biller.cc — the sampler: close intervals, estimate joules, attribute, price, record.
#include "faasd-shim/billing/energy_biller.h"

#include <time.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace faasnode::billing {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;
namespace accounts = junction::sched::accounts;

namespace {
std::int64_t UnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}
}  // namespace

EnergyBiller::EnergyBiller(junction::sched::Runtime* rt, const BillingOptions& options)
    : rt_(rt), options_(options), queues_(static_cast<std::size_t>(rt->num_cores()) + 1) {}

Status<std::unique_ptr<EnergyBiller>> EnergyBiller::Start(junction::sched::Runtime* rt,
                                                          const BillingOptions& options) {
  if (options.interval < std::chrono::milliseconds(1)) {
    return MakeError(ErrorCode::kInvalidArgument, "energy.interval_ms: below 1 ms; use 10 (the default) or more");
  }
  std::unique_ptr<EnergyBiller> b(new EnergyBiller(rt, options));
  auto model = energy::PowerModel::Create(options.model);
  if (!model) return std::unexpected(model.error());
  b->model_ = std::make_unique<energy::PowerModel>(*model);
  auto source = options.carbon_trace.empty()
                    ? energy::carbon::IntensitySource::Constant(options.carbon_g_per_kwh)
                    : energy::carbon::IntensitySource::FromCsvFile(
                          options.carbon_trace,
                          {.gaps = energy::carbon::GapPolicy::kInterpolate,
                           .out_of_range = energy::carbon::OutOfRangePolicy::kRepeat});
  if (!source) return std::unexpected(source.error());
  auto carbon = energy::carbon::CarbonModel::Create(std::move(*source), {});
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
  auto ledger = energy::Ledger::Open({.path = options.ledger_path, .producers = 1});
  if (!ledger) return std::unexpected(ledger.error());
  b->ledger_ = std::move(*ledger);
  if (b->ledger_->open_report().rows_lost > 0) {
    spdlog::warn("energy ledger {}: {} invocation row(s) were lost in a crash before this start",
                 options.ledger_path, b->ledger_->open_report().rows_lost);
  }
  // The runtime's intervals are in TSC; the ledger's times in unix ns.
  b->tsc_hz_ = junction::sched::TscHz();
  b->tsc0_ = junction::sched::Rdtsc();
  b->unix0_ns_ = UnixNs();
  // Start from a fresh interval so the first one does not span the node's whole start-up.
  if (auto first = rt->CloseInterval(); !first) return std::unexpected(first.error());
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

void EnergyBiller::Complete(CompletedCall call) {
  const int core = junction::sched::CurrentCore();
  CoreQueue& q = queues_[core < 0 ? queues_.size() - 1 : static_cast<std::size_t>(core)];
  std::lock_guard<junction::sched::Spinlock> l(q.lock);
  q.calls.push_back(std::move(call));
}

void EnergyBiller::SamplerLoop() {
  while (!stop_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(options_.interval);
    if (stop_.load(std::memory_order_acquire)) break;
    if (auto s = Step(false); !s && s.error().message() != last_error_) {
      last_error_ = s.error().message();
      spdlog::warn("energy: {}", last_error_);
    }
  }
}

Status<void> EnergyBiller::Step(bool final_step) {
  // Calls completed before this close end inside the interval it closes (or earlier ones).
  std::vector<CompletedCall> fresh;
  for (CoreQueue& q : queues_) {
    std::lock_guard<junction::sched::Spinlock> l(q.lock);
    for (auto& c : q.calls) fresh.push_back(std::move(c));
    q.calls.clear();
  }
  auto snap = rt_->CloseInterval(std::chrono::milliseconds(final_step ? 2000 : 200));
  if (!snap) {
    // Not lost: the calls wait for the next interval.
    for (auto& c : fresh) waiting_.push_back(std::move(c));
    return std::unexpected(snap.error());
  }
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
  const std::int64_t begin_ns = TscToUnixNs(begin_tsc);
  const std::int64_t end_ns = TscToUnixNs(end_tsc);
  const energy::IntervalEnergy meter = model_->Estimate(begin_ns, end_ns, cores);
  auto attribution = attributor_.Attribute(meter, cores);
  if (!attribution) return std::unexpected(attribution.error());
  Status<void> priced = book_->Add(*attribution);  // joules are added even if pricing failed
  if (auto s = ledger_->PushInterval(energy::IntervalRecord::From(*attribution)); !s) return s;
  intervals_.fetch_add(1, std::memory_order_relaxed);
  for (auto& c : fresh) waiting_.push_back(std::move(c));
  // Every waiting call ended before this close: its bill is final now.
  for (CompletedCall& c : waiting_) {
    energy::InvocationRecord rec;
    rec.call_id.Assign(c.call_id);
    rec.function.Assign(c.function);
    rec.ns.Assign(c.ns);
    rec.start_ns = c.start_ns;
    rec.end_ns = c.end_ns;
    rec.status = c.status;
    rec.bytes_in = c.bytes_in;
    rec.bytes_out = c.bytes_out;
    if (std::optional<energy::Bill> bill = book_->Take(c.account)) {
      rec.FillFromBill(*bill);
    } else {
      // It ran no cycle under its own account (nothing to bill): a zero row, model-sourced.
      rec.joules.Set(energy::Zone::kPackage, energy::Joules{0.0});
      rec.joules.sources.Add(energy::Source::kModel);
    }
    if (auto p = ledger_->Push(0, rec); !p) return std::unexpected(p.error());
  }
  waiting_.clear();
  return priced;
}

Status<void> EnergyBiller::Stop() {
  if (stopped_.exchange(true)) return {};
  stop_.store(true, std::memory_order_release);
  if (sampler_.joinable()) sampler_.join();
  Status<void> last = Step(true);
  if (auto f = ledger_->Flush(); !f && last) last = f;
  if (auto c = ledger_->Close(); !c && last) last = c;
  return last;
}

}  // namespace faasnode::billing
