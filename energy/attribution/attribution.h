// attribution.h — shares each sampling interval's measured (or modelled) joules among the
// accounts that used the CPU in it, by cycles, and sums an invocation's shares into its bill.
//
// Per interval: an account gets meter_joules × its cycles / all cycles of the interval (all
// cores), zone by zone. Idle, runtime overhead and unaccounted cycles (cycles of the interval
// the runtime did not account: other processes, the kernel) are accounts of their own. The
// policy says whether idle (static) power and overhead are shared out to the invocations of the
// interval, pro rata by their busy cycles, or reported apart; unaccounted is always reported
// apart. Whatever the policy, the accounts of an interval add up to its meter reading (to
// floating-point rounding).
//
//   energy::Attributor attributor({.idle = SharePolicy::kReportApart});
//   energy::BillBook bills(&carbon_model);              // or nullptr: joules only
//   auto shares = attributor.Attribute(interval_energy, core_cycles);
//   bills.Add(*shares);                                 // every interval, in time order
//   std::optional<Bill> bill = bills.Take(account_id);  // once the invocation is done
#pragma once

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "energy/carbon/intensity.h"
#include "energy/sensors/counter.h"
#include "energy/sensors/cycles.h"
#include "energy/sensors/zones.h"
#include "junction/base/error.h"

namespace energy {

enum class SharePolicy : uint8_t {
  kReportApart,         // the class keeps its joules; invocations pay for their cycles only
  kShareToInvocations,  // the class's joules go to the interval's invocations by busy cycles
};

struct AttributionOptions {
  SharePolicy idle = SharePolicy::kReportApart;      // static power while cores idle
  SharePolicy overhead = SharePolicy::kReportApart;  // polling, the network stack
};

// One invocation account's share of one interval.
struct AccountShare {
  uint64_t account_id = 0;
  uint64_t cycles = 0;        // over all cores
  double core_seconds = 0.0;  // cycles / elapsed cycles of each core × interval length
  ZoneJoules joules;
};

struct IntervalAttribution {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  ZoneJoules meter;
  std::vector<AccountShare> invocations;  // sorted by account_id, one entry per account
  ZoneJoules idle;                        // zero (absent zones) when shared out
  ZoneJoules overhead;                    // zero when shared out
  ZoneJoules unaccounted;
  uint64_t busy_cycles = 0;
  uint64_t idle_cycles = 0;
  uint64_t overhead_cycles = 0;
  uint64_t unaccounted_cycles = 0;

  ZoneJoules InvocationTotal() const;
  // invocations + idle + overhead + unaccounted: equals `meter` to rounding.
  ZoneJoules SumOfAccounts() const;
};

// Stateless apart from its options; Attribute() is const and thread-safe.
class Attributor {
 public:
  explicit Attributor(const AttributionOptions& options = {}) : options_(options) {}

  // Shares `meter` among the accounts in `cores` (one entry per core that ran in the interval).
  // Allocates the result's vector. Errors: kInvalidArgument when a core's tsc_end < tsc_begin
  // or a core appears twice.
  junction::Status<IntervalAttribution> Attribute(const IntervalEnergy& meter,
                                                  std::span<const CoreIntervalCycles> cores) const;

  const AttributionOptions& options() const { return options_; }

 private:
  AttributionOptions options_;
};

// An invocation's bill: the sum of its shares over the intervals it touched.
struct Bill {
  uint64_t account_id = 0;
  uint64_t cycles = 0;
  double core_seconds = 0.0;
  ZoneJoules joules;
  double grams = 0.0;           // operational, each interval priced at its own time
  double embodied_grams = 0.0;  // core_seconds × embodied rate
  carbon::IntensityKind intensity_kind = carbon::IntensityKind::kConstant;  // worst seen
  bool carbon_complete = true;  // false if an interval could not be priced (joules still in)
  int64_t first_ns = 0;         // begin of the first interval touched
  int64_t last_ns = 0;          // end of the last interval touched
  uint32_t intervals = 0;

  // Energy-weighted mean intensity, gCO2e/kWh (0 with no energy).
  double MeanIntensity() const;
};

// Node-wide totals per account class since the book was created.
struct ClassTotals {
  ZoneJoules meter;
  ZoneJoules invocations;
  ZoneJoules idle;
  ZoneJoules overhead;
  ZoneJoules unaccounted;
  double meter_grams = 0.0;
  uint64_t intervals = 0;
};

// Accumulates bills. Not thread-safe: one thread (the energy thread) adds intervals in time
// order and takes bills; the wiring layer takes an invocation's bill once the interval holding
// its end has been added.
class BillBook {
 public:
  // `carbon` is borrowed and must outlive the book; nullptr: no grams.
  explicit BillBook(const carbon::CarbonModel* carbon) : carbon_(carbon) {}
  BillBook(const BillBook&) = delete;
  BillBook& operator=(const BillBook&) = delete;

  // Adds every share of the interval to its account's bill, priced at the interval's mean
  // intensity. On a carbon error the joules are still added (the bills are marked
  // carbon_complete = false) and the error is returned.
  junction::Status<void> Add(const IntervalAttribution& interval);

  // Add(interval), then out[i] = Take(finishing[i]) for every i — in one pass (Add is this with
  // nothing finishing), where the bill
  // of a finishing account that touched no earlier interval (a call shorter than an interval:
  // nearly all of them) never enters the book, so it costs no map insert, search or erase.
  // `finishing` in any order (ascending is cheapest), no duplicates; `out` is resized to it.
  // `invocations`, when given, receives interval.InvocationTotal(), summed in the same order by
  // the same pass (so the caller need not make a second one over the shares).
  junction::Status<void> AddAndTake(const IntervalAttribution& interval, std::span<const uint64_t> finishing,
                                    std::vector<std::optional<Bill>>& out, ZoneJoules* invocations = nullptr);
  // Puts a taken bill back (a caller that could not use it): the next Take finds it.
  void PutBack(Bill bill);

  // Removes and returns an account's bill; std::nullopt if it touched no interval.
  std::optional<Bill> Take(uint64_t account_id);
  const Bill* Find(uint64_t account_id) const;
  size_t open_bills() const { return bills_.size(); }
  const ClassTotals& totals() const { return totals_; }

 private:
  // The interval's price, once per interval.
  struct Price {
    std::optional<carbon::CarbonPrice> unit;  // the interval's intensity; none: not priced
    double g_per_kwh = 0.0;
    double embodied_rate = 0.0;
  };
  Price PriceOf(const IntervalAttribution& iv, junction::Status<void>& result) const;
  // Adds one share to a bill (`fresh`: the bill's first interval).
  static void Apply(Bill& b, bool fresh, const AccountShare& a, const IntervalAttribution& iv, const Price& p,
                    bool carbon);

  const carbon::CarbonModel* carbon_;
  std::vector<std::pair<uint64_t, uint32_t>> order_;  // AddAndTake: finishing, by account
  // One bill per call, opened and taken every interval (300k/s at a node's max rate): the
  // map's nodes come from a pool that keeps freed ones, not from malloc/free per call (the
  // map points at the pool: hence no copy or move of a book).
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::unordered_map<uint64_t, Bill> bills_{&pool_};
  ClassTotals totals_;
};

}  // namespace energy
