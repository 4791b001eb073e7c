// cycles.h — the runtime's cycle accounts for one core and one sampling interval, as energy
// consumes them (a wiring layer converts the scheduler's per-core counters into these).
#pragma once

#include <cstdint>
#include <vector>

namespace energy {

// Cycles one account (one invocation, by the runtime's opaque account id) spent on a core.
struct AccountCycles {
  uint64_t account_id = 0;
  uint64_t cycles = 0;
};

// One core's cycle accounts for one sampling interval. Invariant the producer should keep:
// idle_cycles + overhead_cycles + sum(busy.cycles) <= tsc_end - tsc_begin; cycles the runtime
// did not account for (another process, the kernel) are attributed to the "unaccounted" class.
struct CoreIntervalCycles {
  uint32_t core = 0;
  uint64_t tsc_begin = 0;
  uint64_t tsc_end = 0;
  uint64_t idle_cycles = 0;      // the core parked or spinning with nothing to run
  uint64_t overhead_cycles = 0;  // runtime work owned by no invocation: polling, the stack
  std::vector<AccountCycles> busy;

  uint64_t ElapsedCycles() const { return tsc_end >= tsc_begin ? tsc_end - tsc_begin : 0; }
  uint64_t BusyCycles() const {
    uint64_t sum = 0;
    for (const AccountCycles& a : busy) sum += a.cycles;
    return sum;
  }
};

}  // namespace energy
