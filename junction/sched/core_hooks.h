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

// `bound()` is asked each time the core is about to block, idle: it returns the MonoNs time by
// which the core must wake to run its poll hooks again (INT64_MAX: no need). The core blocks
// at most until the earliest bound (less timer_spin_us, as for a timer); a bound within
// timer_spin_us keeps it spinning. For a device with no wake-up fd (memif): the hook is then
// polled on every pass while the core has work or spins, and at the bound's pace only while it
// sleeps, with no uthread waking on a timer to poll a busy core. Runs on the idle context, once
// per block: it may keep a back-off of its own.
void AddIdleBound(std::function<std::int64_t()> bound);

// Adds `fd` to the epoll set the core blocks in when idle; `callback(revents)` runs when the
// core wakes with it ready (an rx-interrupt fd, a kernel-backend epoll fd). Level- or
// edge-triggered as `events` says (EPOLLIN, EPOLLET, ...). Errors: epoll_ctl's.
Status<void> AddIdleFd(int fd, std::uint32_t events, std::function<void(std::uint32_t)> callback);

// From a hook (the core's idle context): whether uthreads wait in this core's run queue.
// A poll hook uses it to batch: readiness found while the queue is long waits behind it
// anyway, so polling once per queued uthread only buys system calls.
bool LocalRunQueueEmpty();

}  // namespace junction::sched
