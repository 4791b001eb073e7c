// thread.h — the uthread control block (internal to junction/sched) and account ids.
//
// A Thread lives at the top of its own stack: spawning allocates nothing but a pooled stack.
// Fields are written by the core that runs or queues the thread; the atomics are the only
// fields other cores touch (wake-ups, joins, timeouts).
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace junction::sched {

// Who is charged for the cycles a uthread runs. Ids below kFirstUser are classes the runtime
// defines; any other value is the caller's (the node uses invocation ids).
using AccountId = std::uint64_t;
namespace accounts {
inline constexpr AccountId kIdle = 0;     // the core's kthread was blocked: no work
inline constexpr AccountId kRuntime = 1;  // scheduling: finding work, switching, stealing
inline constexpr AccountId kPoll = 2;     // spinning for work that did not come
inline constexpr AccountId kNet = 3;      // the network stack's own uthreads
inline constexpr AccountId kFirstUser = 16;
inline constexpr AccountId kInherit = ~AccountId{0};  // SpawnOptions: the spawner's account
}  // namespace accounts

class Core;

namespace detail {

namespace ctx = boost::context::detail;

struct Thread {
  // --- the home core's line: read and written by the core that runs or queues the thread.
  // A cross-core wake-up must not write here, or the target core pays a cache miss to run
  // the thread it was just handed.
  ctx::fcontext_t ctx = nullptr;
  Thread* next = nullptr;  // link in owner-only lists and wait queues
  Thread* prev = nullptr;
  AccountId account = accounts::kRuntime;
  std::uint64_t seq = 0;  // enqueue order on its core; keeps FIFO across its two queues
  bool stealable = true;
  bool is_idle_context = false;
  bool timed_out = false;
  // A permit the thread gave itself: an Unpark on the kthread that runs it, while it runs (a
  // poll hook it runs while parking in place finds what it waits for). Only that kthread
  // reads and writes it while the thread runs (a move to another core goes through a queue's
  // synchronisation), so it is plain, and taking it needs no locked compare-exchange on
  // park_state. Park and ParkUntil take it first; a permit is a permit either way (spurious
  // wake-ups are allowed).
  bool self_permit = false;
  // Takes self_permit if it is there (Park, ParkUntil and park polling look here first).
  bool TakeSelfPermit() { return self_permit && !(self_permit = false); }
  bool in_wait_queue = false;  // linked in the WaitQueue at wait_object (under its lock)
  void (*on_timeout)(Thread*) = nullptr;  // run by the timer that won wait_token
  void* wait_object = nullptr;            // for on_timeout: the WaitQueue it is linked in
  void (*invoke)(void* fn) = nullptr;  // runs and destroys the callable at `fn`
  void* fn = nullptr;
  char* stack_low = nullptr;  // lowest usable byte of the stack
  std::size_t stack_size = 0;

  // --- the wakers' line: what other cores (wakers, joiners, timers) read and write.
  // 0 running, 1 notified (a permit is pending), 2 parked. See Park()/Unpark().
  alignas(64) std::atomic<std::uint32_t> park_state{0};
  // Home core: where it runs or is queued; wake-ups go there. Written by whoever queues the
  // thread on a core (before it runs there), read by wakers.
  Core* core = nullptr;
  std::atomic<Thread*> mpsc_next{nullptr};  // link in a core's shared inbox
  // 0 alive; kJoinExited; kJoinDetached; otherwise the Thread* of the waiting joiner, with
  // kJoinDirect or'ed in when that joiner waits unparked (see JoinHandle::Join).
  std::atomic<std::uintptr_t> join_word{0};
  // Non-zero while the thread waits; whoever exchanges it to 0 (waker or timer) wakes it.
  std::atomic<std::uint64_t> wait_token{0};
};

inline constexpr std::uintptr_t kJoinExited = 1;
inline constexpr std::uintptr_t kJoinDetached = 2;
// A joiner that handed its core straight to the thread it joins waits without parking: its
// park_state stays "running" (an Unpark only leaves a permit), it sits in no queue, and only
// that thread's exit makes it runnable again — so neither side needs an atomic RMW.
inline constexpr std::uintptr_t kJoinDirect = 4;  // Thread is 64-byte aligned: bit 2 is free

inline constexpr std::uint32_t kParkRunning = 0;
inline constexpr std::uint32_t kParkNotified = 1;
inline constexpr std::uint32_t kParkParked = 2;

}  // namespace detail
}  // namespace junction::sched
