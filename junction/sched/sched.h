// sched.h — the uthread API: spawn, join, yield, sleep, park/unpark, accounts.
//
// Every function here except Spawn/SpawnDetached must be called from a uthread (a function
// running inside Runtime::Run); they never block the kthread — a waiting uthread parks and
// its core runs others. Spawn may also be called from a plain kthread while the runtime runs.
//
//   auto h = Spawn([&] { SleepFor(1ms); result = 42; });
//   if (!h) return h.error();
//   h->Join();
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "junction/base/error.h"
#include "junction/sched/thread.h"
#include "junction/sched/tsc.h"

namespace junction::sched {

struct SpawnOptions {
  // Index into RuntimeConfig::cores; -1: the calling core (round-robin from outside).
  int core = -1;
  // Who pays for its cycles; kInherit takes the spawner's account (kRuntime from outside).
  AccountId account = accounts::kInherit;
  // false: never moved to another core by work stealing (e.g. a flow's owner thread).
  bool stealable = true;
};

// A joinable uthread. Move-only. Destroying a handle that was neither joined nor detached
// detaches it.
class JoinHandle {
 public:
  JoinHandle() = default;
  explicit JoinHandle(detail::Thread* t) : t_(t) {}
  JoinHandle(JoinHandle&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  JoinHandle& operator=(JoinHandle&& o) noexcept {
    if (this != &o) {
      if (t_ != nullptr) Detach();
      t_ = std::exchange(o.t_, nullptr);
    }
    return *this;
  }
  ~JoinHandle() {
    if (t_ != nullptr) Detach();
  }
  bool joinable() const { return t_ != nullptr; }
  // Parks the calling uthread until the thread has returned, then frees its stack.
  void Join();
  // Lets the thread free itself when it returns.
  void Detach();

 private:
  detail::Thread* t_ = nullptr;
};

namespace detail {
// Allocates a stack, places the Thread block and `fn_size` bytes for the callable at its top,
// and returns the Thread with fn pointing at the callable's storage. Errors: stack exhaustion.
Status<Thread*> AllocateThread(std::size_t fn_size, std::size_t fn_align, const SpawnOptions& o);
// Makes a freshly allocated thread runnable on its core.
void StartThread(Thread* t, const SpawnOptions& o);
inline constexpr std::size_t kMaxCallableBytes = 4096;
}  // namespace detail

// Starts `fn` on a new uthread. The callable is moved onto the new thread's stack (at most
// 4 KiB of captures: wrap bigger state in a pointer). Errors: kResourceExhausted (no stack).
template <typename F>
Status<JoinHandle> Spawn(F&& fn, SpawnOptions options = {}) {
  using Fn = std::decay_t<F>;
  static_assert(sizeof(Fn) <= detail::kMaxCallableBytes, "capture less; pass big state by pointer");
  auto t = detail::AllocateThread(sizeof(Fn), alignof(Fn), options);
  if (!t) return std::unexpected(t.error());
  new ((*t)->fn) Fn(std::forward<F>(fn));
  (*t)->invoke = [](void* p) {
    Fn* f = static_cast<Fn*>(p);
    (*f)();
    f->~Fn();
  };
  detail::StartThread(*t, options);
  return JoinHandle(*t);
}

// As Spawn, but nobody joins it: its stack is freed when it returns.
template <typename F>
Status<void> SpawnDetached(F&& fn, SpawnOptions options = {}) {
  auto h = Spawn(std::forward<F>(fn), options);
  if (!h) return std::unexpected(h.error());
  h->Detach();
  return {};
}

// Lets every other runnable uthread of this core run once, then continues.
void Yield();
// Parks until the time has come. Precision: timers fire within a few microseconds when the
// core is busy or spinning; a blocked core starts spinning timer_spin_us early.
void SleepUntil(Deadline deadline);
inline void SleepFor(Clock::duration d) { SleepUntil(Clock::now() + d); }

// Park/unpark with a permit (java.util.concurrent.locks.LockSupport semantics): Unpark makes
// one pending permit; Park consumes it or parks until Unpark. Wake-ups may be spurious: park
// in a loop that re-checks its condition. Unpark may be called from any core or kthread; the
// thread becomes runnable on its home core (the core it last ran on).
using ThreadRef = detail::Thread*;
ThreadRef Self();
void Park();
// As Park, but returns false if the deadline passed first.
bool ParkUntil(Deadline deadline);
void Unpark(ThreadRef t);
// Whether `t` is the uthread running on the caller's kthread right now (false outside the
// runtime). Then nothing but this kthread touches t until it parks: what a waker running in
// t's own poll pass (Core's park polling) needs to know to skip atomic read-modify-writes.
bool IsRunningHere(ThreadRef t);
// Unpark's own fast path, for a waker that does something else when it does not apply: if `t`
// is the uthread running on this kthread, gives it its permit (a plain store, no locked
// instruction) and returns true; otherwise does nothing and returns false.
bool UnparkIfRunningHere(ThreadRef t);

// Cycle accounts of the running uthread (see runtime.h, CloseInterval).
AccountId CurrentAccount();
void SetAccount(AccountId account);
// SetAccount as of `tsc`, a TSC reading (Rdtsc) the caller took on this kthread: callers that
// read the TSC anyway save the ~11 ns read. Cycles from `tsc` on go to `account`.
void SetAccountAt(AccountId account, std::uint64_t tsc);

// Whether the caller is a uthread, and the index of the core running it (-1 outside).
bool InRuntime();
int CurrentCore();

// Runs fn(i) on a uthread pinned to each core i of the current runtime (never stolen, its
// cycles charged to `account`) and returns when every one has finished: the first error one
// returned, or the spawn failure (after joining those already started, which may reference
// the caller's locals). For per-core set-up and tear-down. From a uthread; blocking.
Status<void> OnEveryCore(const std::function<Status<void>(int)>& fn,
                         AccountId account = accounts::kInherit);

}  // namespace junction::sched
