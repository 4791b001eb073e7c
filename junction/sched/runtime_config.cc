// runtime_config.cc — validation of RuntimeConfig against the machine it runs on.
#include "junction/sched/runtime_config.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace junction::sched {

std::vector<int> AllowedCpus(int tid) {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(tid, sizeof(set), &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i) {
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
    }
  }
  return cpus;
}

Status<void> ValidateRuntimeConfig(const RuntimeConfig& config) {
  auto bad = [](std::string msg) { return MakeError(ErrorCode::kInvalidArgument, std::move(msg)); };
  if (config.cores.empty()) {
    return bad("runtime.cores: empty; list at least one CPU id, e.g. cores = [0]");
  }
  const std::vector<int> allowed = AllowedCpus();
  std::set<int> seen;
  for (int c : config.cores) {
    if (c < 0 || std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
      std::string list;
      for (int a : allowed) list += (list.empty() ? "" : ",") + std::to_string(a);
      return bad(fmt::format("runtime.cores: CPU {} is not available on this machine "
                             "(usable CPUs: {})", c, list));
    }
    if (!seen.insert(c).second) {
      return bad(fmt::format("runtime.cores: CPU {} is listed twice; list each CPU once", c));
    }
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (config.stack_size < 16 * 1024) {
    return bad(fmt::format("runtime.stack_size_kib: {} KiB is below the 16 KiB minimum",
                           config.stack_size / 1024));
  }
  if (config.stack_size > 64ull * 1024 * 1024) {
    return bad(fmt::format("runtime.stack_size_kib: {} KiB is above the 65536 KiB maximum",
                           config.stack_size / 1024));
  }
  if (config.stack_size % page != 0) {
    return bad(fmt::format("runtime.stack_size_kib: {} bytes is not a multiple of the {}-byte "
                           "page size", config.stack_size, page));
  }
  if (config.idle_spin_us > 1'000'000) {
    return bad("runtime.idle_spin_us: above 1000000 (1 s); an idle core would burn a CPU");
  }
  if (config.timer_spin_us > 10'000) {
    return bad("runtime.timer_spin_us: above 10000 (10 ms)");
  }
  if (config.park_poll_us > 1000) {
    return bad("runtime.park_poll_us: above 1000 (1 ms); a parked uthread would hold its core");
  }
  if (config.poll_interval_us == 0 || config.poll_interval_us > 1'000'000) {
    return bad("runtime.poll_interval_us: must be between 1 and 1000000");
  }
  return {};
}

}  // namespace junction::sched
