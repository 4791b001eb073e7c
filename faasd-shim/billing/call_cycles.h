// call_cycles.h — CallCycles: the on-CPU cycles of one call, measured by the uthread that
// runs it, for the estimate at completion (EnergyBiller::EstimateCall).
//
//   billing::CallCycles cc;            // on the uthread, right after SetAccount(call)
//   pool->Invoke(...);
//   billing::CallCycles::Result r = cc.End();   // right before SetAccount(previous)
//
// or, with one TSC reading shared by the account switch and the count (no other read):
//   const std::uint64_t t0 = junction::sched::Rdtsc();
//   junction::sched::SetAccountAt(call, t0);
//   billing::CallCycles cc(t0);
//   ... r = cc.End(); junction::sched::SetAccountAt(previous, r.end_tsc);
//
// When the call never left its core (the core made no switch between Begin and End), the TSC
// delta is exactly the cycles the runtime charges its account (on_cpu = true). When it left
// (it parked, slept or yielded), the cycles it ran are known only to the runtime's accounts,
// which the sampler attributes at the next interval: the delta is then the call's wall time
// in cycles, an upper bound of a single-uthread call's cycles (on_cpu = false).
// Cost: two TSC reads (one with the start given) and two relaxed loads of the core's switch
// counter; no system call. The caller may reuse End()'s reading (Result::end_tsc) for its own
// clocks instead of a third.
#pragma once

#include <cstdint>

#include "junction/sched/core.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace faasnode::billing {

class CallCycles {
 public:
  struct Result {
    std::uint64_t cycles = 0;
    bool on_cpu = false;      // exact: the call did not leave its core
    std::uint64_t end_tsc = 0;  // the TSC End() read, on the kthread that called it
  };

  CallCycles() : CallCycles(junction::sched::Rdtsc()) {}
  // Counts from `start_tsc`, a TSC reading taken on this kthread with no switch since.
  explicit CallCycles(std::uint64_t start_tsc)
      : core_(junction::sched::CurrentCore()), switches_(Switches(core_)), tsc_(start_tsc) {}

  Result End() const {
    const std::uint64_t now = junction::sched::Rdtsc();
    const int core = junction::sched::CurrentCore();
    return {.cycles = now - tsc_, .on_cpu = core >= 0 && core == core_ && Switches(core) == switches_, .end_tsc = now};
  }

 private:
  static std::uint64_t Switches(int core) {
    junction::sched::Runtime* rt = junction::sched::Runtime::Current();
    return core >= 0 && rt != nullptr ? rt->counters(core).switches : 0;
  }
  int core_;
  std::uint64_t switches_;
  std::uint64_t tsc_;
};

}  // namespace faasnode::billing
