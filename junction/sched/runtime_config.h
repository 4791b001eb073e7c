// runtime_config.h — what the uthread runtime is told at start-up, and its validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "junction/base/error.h"

namespace junction::sched {

struct RuntimeConfig {
  // Cores to run one pinned worker kthread on, each; ids as the kernel numbers CPUs.
  std::vector<int> cores = {0};
  // Usable bytes per uthread stack (a guard page is added below it). Committed lazily.
  std::size_t stack_size = 64 * 1024;
  // Put a PROT_NONE guard page under every stack. Each guard costs a kernel VMA: more than
  // ~30k live uthreads need vm.max_map_count raised (the runtime says so when it runs out).
  bool stack_guard = true;
  // Stacks a core keeps committed in its free pool; stacks freed past this are returned to
  // the kernel with MADV_DONTNEED (the mapping stays, so RSS drops).
  std::size_t stack_cache = 1024;
  // Stacks each core maps when it starts, with the top 16 KiB of each mapped in too: the
  // first uthreads of a burst then take no page faults on their stacks (~2 per stack, 1-12 µs
  // each in a VM; docs/benchmarks/load.md). 0: map slabs on demand.
  std::size_t stack_prealloc = 0;
  // Bytes of malloc heap each core keeps mapped in and free in its thread's arena once the
  // program calls PregrowCoreHeaps (heap_prealloc.h; the trim threshold is raised at Create to
  // keep them): the first burst's parsers and buffers then take no page faults growing the
  // heap. 0: the heap grows on demand.
  std::size_t heap_prealloc = 0;
  // How long an idle core polls for work before it blocks its kthread.
  std::uint32_t idle_spin_us = 50;
  // A core whose next timer is nearer than this spins instead of blocking, so that timers
  // fire on time (a blocked core takes 40-55 us to wake on these VMs).
  std::uint32_t timer_spin_us = 80;
  // The longest a core runs uthreads back to back before it polls the network hooks and its
  // remote wake-up inbox again.
  std::uint32_t poll_interval_us = 5;
  // How long a uthread that parks on a core with nothing else to run polls the network hooks
  // itself before it switches away: a wake-up meanwhile (the response to a request it just
  // sent) then costs no context switch. 0: never; the idle loop alone polls.
  std::uint32_t park_poll_us = 10;
};

// Checks every field against this machine. The error names the key (as it is spelt in the
// [runtime] section of the node config) and the problem in one line.
Status<void> ValidateRuntimeConfig(const RuntimeConfig& config);

// The CPUs thread `tid` may run on (sched_getaffinity; 0: the calling thread), ascending.
// From a pinned runtime worker, AllowedCpus(getpid()) gives the process's CPUs: those of the
// main thread, which the runtime does not pin.
std::vector<int> AllowedCpus(int tid = 0);

}  // namespace junction::sched
