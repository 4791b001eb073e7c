// core_hooks.h — how a backend (the network stack) plugs into a core's idle loop.
//
// Both calls register on the core of the calling uthread and must be made from a uthread
// running there (spawn one per core with SpawnOptions{.core = i, .stealable = false}).
// Hooks run on the core's idle context, between uthreads, never concurrently with each other
// on one core; they must not block or park (they may Unpark/Spawn).
#pragma once

#include <cstdint>
#include <functional>

#include "junction/base/error.h"

namespace junction::sched {

// Called on every pass of the idle loop and at least every poll_interval_us while uthreads
// run back to back (e.g. an rx burst, or a non-blocking epoll_wait).
void AddPollHook(std::function<void()> hook);

// Adds `fd` to the epoll set the core blocks in when idle; `callback(revents)` runs when the
// core wakes with it ready (an rx-interrupt fd, a kernel-backend epoll fd). Level- or
// edge-triggered as `events` says (EPOLLIN, EPOLLET, ...). Errors: epoll_ctl's.
Status<void> AddIdleFd(int fd, std::uint32_t events, std::function<void(std::uint32_t)> callback);

// From a hook (the core's idle context): whether uthreads wait in this core's run queue.
// A poll hook uses it to batch: readiness found while the queue is long waits behind it
// anyway, so polling once per queued uthread only buys system calls.
bool LocalRunQueueEmpty();

// From a poll hook: the TSC the core read for this pass, before it ran the hooks; never older
// than a previous pass's. A TSC read costs ~20 ns on these VMs, a third of an empty pass:
// every hook of a pass shares one, and the passes a parking uthread runs itself
// (RuntimeConfig::park_poll_us) share one among four. At most ~0.3 us old: as fresh as a
// hook needs (TCP timers tick in milliseconds).
std::uint64_t PollPassTsc();

}  // namespace junction::sched
