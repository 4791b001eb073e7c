// attribution.cc — cycle-share attribution of interval energy and bill accumulation.
#include "energy/attribution/attribution.h"

#include <algorithm>

#include <fmt/format.h>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

ZoneJoules Scaled(const ZoneJoules& z, double k) {
  ZoneJoules out;
  out.AddScaled(z, k);
  return out;
}

}  // namespace

ZoneJoules IntervalAttribution::InvocationTotal() const {
  ZoneJoules sum;
  for (const AccountShare& a : invocations) sum.AddScaled(a.joules, 1.0);
  return sum;
}

ZoneJoules IntervalAttribution::SumOfAccounts() const {
  ZoneJoules sum = InvocationTotal();
  sum.AddScaled(idle, 1.0);
  sum.AddScaled(overhead, 1.0);
  sum.AddScaled(unaccounted, 1.0);
  return sum;
}

Status<IntervalAttribution> Attributor::Attribute(const IntervalEnergy& meter,
                                                  std::span<const CoreIntervalCycles> cores) const {
  IntervalAttribution out;
  out.begin_ns = meter.begin_ns;
  out.end_ns = meter.end_ns;
  out.meter = meter.joules;
  const double seconds = std::max<int64_t>(0, meter.end_ns - meter.begin_ns) * 1e-9;

  // Every core's accounts go into the result's vector, which is then sorted and merged in
  // place: one allocation of the right size per interval (thousands of accounts at high call
  // rates), not a vector grown by doubling and then copied.
  std::vector<AccountShare>& raw = out.invocations;
  std::size_t accounts = 0;
  for (const CoreIntervalCycles& c : cores) accounts += c.busy.size();
  raw.reserve(accounts);
  std::vector<uint32_t> seen;
  for (const CoreIntervalCycles& c : cores) {
    if (c.tsc_end < c.tsc_begin) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("core {}: tsc_end {} < tsc_begin {}: the cycle accounts are "
                                   "corrupt; check the runtime's interval bookkeeping",
                                   c.core, c.tsc_end, c.tsc_begin));
    }
    if (std::find(seen.begin(), seen.end(), c.core) != seen.end()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("core {} appears twice in one interval: merge its cycle "
                                   "accounts before attributing",
                                   c.core));
    }
    seen.push_back(c.core);
    const uint64_t elapsed = c.ElapsedCycles();
    const uint64_t busy = c.BusyCycles();
    const uint64_t accounted = c.idle_cycles + c.overhead_cycles + busy;
    out.busy_cycles += busy;
    out.idle_cycles += c.idle_cycles;
    out.overhead_cycles += c.overhead_cycles;
    out.unaccounted_cycles += elapsed > accounted ? elapsed - accounted : 0;
    const double per_cycle_s = elapsed > 0 ? seconds / static_cast<double>(elapsed) : 0.0;
    for (const AccountCycles& a : c.busy) {
      raw.push_back(AccountShare{a.account_id, a.cycles, a.cycles * per_cycle_s, {}});
    }
  }
  // One entry per account (an invocation may have run on several cores).
  // One core's call accounts are numbered in order (junction::sched::SequentialAccount): with
  // one core the list is sorted already, and the check costs a pass instead of a sort.
  auto by_account = [](const AccountShare& a, const AccountShare& b) { return a.account_id < b.account_id; };
  if (!std::is_sorted(raw.begin(), raw.end(), by_account)) std::sort(raw.begin(), raw.end(), by_account);
  std::size_t merged = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (merged > 0 && raw[merged - 1].account_id == raw[i].account_id) {
      raw[merged - 1].cycles += raw[i].cycles;
      raw[merged - 1].core_seconds += raw[i].core_seconds;
    } else {
      raw[merged++] = raw[i];
    }
  }
  raw.resize(merged);

  const double total = static_cast<double>(out.busy_cycles + out.idle_cycles + out.overhead_cycles +
                                           out.unaccounted_cycles);
  if (total == 0) {
    out.unaccounted = meter.joules;  // nobody ran: the meter's joules belong to no account
    return out;
  }
  const double busy = static_cast<double>(out.busy_cycles);
  const bool share_idle = options_.idle == SharePolicy::kShareToInvocations && busy > 0;
  const bool share_overhead = options_.overhead == SharePolicy::kShareToInvocations && busy > 0;
  // An invocation's weight: its own cycles, plus its busy-cycle share of the classes shared out.
  double uplift = 1.0;
  if (share_idle) uplift += static_cast<double>(out.idle_cycles) / busy;
  if (share_overhead) uplift += static_cast<double>(out.overhead_cycles) / busy;
  for (AccountShare& a : out.invocations) {
    a.joules = Scaled(meter.joules, static_cast<double>(a.cycles) / total * uplift);
  }
  if (!share_idle) out.idle = Scaled(meter.joules, static_cast<double>(out.idle_cycles) / total);
  if (!share_overhead) {
    out.overhead = Scaled(meter.joules, static_cast<double>(out.overhead_cycles) / total);
  }
  out.unaccounted = Scaled(meter.joules, static_cast<double>(out.unaccounted_cycles) / total);
  return out;
}

double Bill::MeanIntensity() const {
  double j = joules.NodeTotal().value;
  return j > 0 ? grams * 3.6e6 / j : 0.0;
}

BillBook::Price BillBook::PriceOf(const IntervalAttribution& iv, Status<void>& result) const {
  Price p;
  if (carbon_ != nullptr) {
    if (auto unit = carbon_->PriceInterval(Joules{1.0}, iv.begin_ns, iv.end_ns, 0.0)) {
      p.unit = *unit;
      p.g_per_kwh = unit->intensity.g_per_kwh;
    } else {
      result = std::unexpected(unit.error());
    }
    p.embodied_rate = carbon_->options().embodied_g_per_core_second;
  }
  return p;
}

void BillBook::Apply(Bill& b, bool fresh, const AccountShare& a, const IntervalAttribution& iv, const Price& p,
                     bool carbon) {
  if (fresh) {
    b.account_id = a.account_id;
    b.first_ns = iv.begin_ns;
    if (p.unit) b.intensity_kind = p.unit->intensity.kind;
  }
  b.cycles += a.cycles;
  b.core_seconds += a.core_seconds;
  b.joules.AddScaled(a.joules, 1.0);
  b.last_ns = iv.end_ns;
  ++b.intervals;
  b.embodied_grams += a.core_seconds * p.embodied_rate;
  if (p.unit) {
    b.grams += carbon::Grams(a.joules.NodeTotal(), p.g_per_kwh);
    b.intensity_kind = carbon::WorseKind(b.intensity_kind, p.unit->intensity.kind);
  } else if (carbon) {
    b.carbon_complete = false;
  }
}

Status<void> BillBook::Add(const IntervalAttribution& iv) {
  std::vector<std::optional<Bill>> none;  // nothing finishing: every share goes into the book
  return AddAndTake(iv, {}, none);
}

Status<void> BillBook::AddAndTake(const IntervalAttribution& iv, std::span<const uint64_t> finishing,
                                  std::vector<std::optional<Bill>>& out, ZoneJoules* invocations_out) {
  Status<void> result;
  const Price p = PriceOf(iv, result);
  // Disengaged slots: clear + resize writes each one's flag; assign(n, nullopt) copied a whole
  // ~140-byte optional<Bill> per call (4% of the sampler's time at 100k calls/s).
  out.clear();
  out.resize(finishing.size());
  order_.clear();
  for (size_t i = 0; i < finishing.size(); ++i) order_.emplace_back(finishing[i], static_cast<uint32_t>(i));
  // Calls finish in about the order they started (their accounts are numbered so): usually
  // sorted already, per core at least.
  if (!std::is_sorted(order_.begin(), order_.end())) std::sort(order_.begin(), order_.end());
  // A merge of two sorted lists: the interval's shares and the finishing accounts.
  auto take_earlier = [&](uint64_t account, std::optional<Bill>& slot) {
    if (bills_.empty()) return;  // no call spans intervals: nothing to search
    if (auto it = bills_.find(account); it != bills_.end()) {
      slot = std::move(it->second);
      bills_.erase(it);
    }
  };
  ZoneJoules invocations;  // iv.InvocationTotal(), summed in the same pass
  auto f = order_.begin();
  for (const AccountShare& a : iv.invocations) {
    invocations.AddScaled(a.joules, 1.0);
    for (; f != order_.end() && f->first < a.account_id; ++f) take_earlier(f->first, out[f->second]);
    if (f != order_.end() && f->first == a.account_id) {
      std::optional<Bill>& slot = out[f->second];
      take_earlier(a.account_id, slot);
      const bool fresh = !slot.has_value();
      if (fresh) slot.emplace();
      Apply(*slot, fresh, a, iv, p, carbon_ != nullptr);
      ++f;
    } else {
      auto [it, fresh] = bills_.try_emplace(a.account_id);  // still running: its bill waits
      Apply(it->second, fresh, a, iv, p, carbon_ != nullptr);
    }
  }
  for (; f != order_.end(); ++f) take_earlier(f->first, out[f->second]);
  totals_.meter.AddScaled(iv.meter, 1.0);
  totals_.invocations.AddScaled(invocations, 1.0);
  if (invocations_out != nullptr) *invocations_out = invocations;
  totals_.idle.AddScaled(iv.idle, 1.0);
  totals_.overhead.AddScaled(iv.overhead, 1.0);
  totals_.unaccounted.AddScaled(iv.unaccounted, 1.0);
  if (p.unit) totals_.meter_grams += carbon::Grams(iv.meter.NodeTotal(), p.g_per_kwh);
  ++totals_.intervals;
  return result;
}

void BillBook::PutBack(Bill bill) {
  const uint64_t account = bill.account_id;
  bills_.insert_or_assign(account, std::move(bill));
}

std::optional<Bill> BillBook::Take(uint64_t account_id) {
  auto it = bills_.find(account_id);
  if (it == bills_.end()) return std::nullopt;
  Bill b = std::move(it->second);
  bills_.erase(it);
  return b;
}

const Bill* BillBook::Find(uint64_t account_id) const {
  auto it = bills_.find(account_id);
  return it == bills_.end() ? nullptr : &it->second;
}

}  // namespace energy
