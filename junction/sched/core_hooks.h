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

// From a poll hook: the TSC the core read at the start of this pass, just before it ran the
// hooks. A TSC read costs ~20 ns on these VMs, a fifth of an empty pass: every hook of a pass
// shares this one (a pass is a few hundred ns at most, so it is as fresh as a hook needs).
std::uint64_t PollPassTsc();

}  // namespace junction::sched
