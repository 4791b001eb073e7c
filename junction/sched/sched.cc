// sched.cc — the free-function uthread API over the calling core.
#include "junction/sched/sched.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "junction/sched/core.h"
#include "junction/sched/core_hooks.h"
#include "junction/sched/runtime.h"

namespace junction::sched {

void Trampoline(detail::ctx::transfer_t t);  // core.cc

namespace {
std::int64_t ToNs(Deadline d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d.time_since_epoch()).count();
}
}  // namespace

namespace detail {

Status<Thread*> AllocateThread(std::size_t fn_size, std::size_t fn_align, const SpawnOptions& o) {
  Core* self = ThisCore();
  Runtime* rt = self != nullptr ? self->runtime() : Runtime::Current();
  if (rt == nullptr) {
    return MakeError(ErrorCode::kUnavailable, "Spawn: no runtime is running; call it inside Runtime::Run");
  }
  if (o.core < -1 || o.core >= rt->num_cores()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Spawn: SpawnOptions::core " + std::to_string(o.core) + " is not a core of the "
                     "runtime (it has " + std::to_string(rt->num_cores()) + ")");
  }
  Status<char*> low = self != nullptr ? self->pool().Get() : rt->ExternalStack();
  if (!low) return std::unexpected(low.error());
  const std::size_t size = rt->config().stack_size;
  char* top = *low + size;
  auto tpos = reinterpret_cast<std::uintptr_t>(top - sizeof(Thread)) & ~std::uintptr_t{63};
  Thread* t = new (reinterpret_cast<void*>(tpos)) Thread();
  std::uintptr_t fpos = (tpos - fn_size) & ~(static_cast<std::uintptr_t>(fn_align) - 1);
  t->fn = reinterpret_cast<void*>(fpos);
  t->stack_low = *low;
  t->stack_size = size;
  t->stealable = o.stealable;
  if (o.account != accounts::kInherit) {
    t->account = o.account;
  } else {
    t->account = self != nullptr ? self->current()->account : accounts::kRuntime;
    if (self != nullptr && self->current()->is_idle_context) t->account = accounts::kRuntime;
  }
  const std::uintptr_t sp = fpos & ~std::uintptr_t{63};
  t->ctx = ctx::make_fcontext(reinterpret_cast<void*>(sp), sp - reinterpret_cast<std::uintptr_t>(*low),
                              &Trampoline);
  return t;
}

void StartThread(Thread* t, const SpawnOptions& o) {
  Core* self = ThisCore();
  Core* target;
  if (o.core < 0 && self != nullptr) {
    target = self;  // the common case: no runtime lookup
  } else {
    Runtime* rt = self != nullptr ? self->runtime() : Runtime::Current();
    target = rt->core(o.core >= 0 ? o.core : rt->NextExternalCore());
  }
  if (target == self) {
    target->PushLocal(t);
  } else if (self != nullptr) {
    target->PushFrom(self, t);
  } else {
    target->PushRemote(t);
  }
}

}  // namespace detail

void JoinHandle::Detach() {
  detail::Thread* t = std::exchange(t_, nullptr);
  std::uintptr_t expected = 0;
  if (!t->join_word.compare_exchange_strong(expected, detail::kJoinDetached,
                                            std::memory_order_acq_rel)) {
    // It has already exited: the stack is ours to free.
    Core* c = ThisCore();
    if (c != nullptr) {
      c->pool().Put(t->stack_low);
    }
    // Outside the runtime the stack stays mapped in its slab until the runtime is destroyed.
  }
}

void SleepUntil(Deadline deadline) { NeedCore("SleepUntil")->SleepUntil(ToNs(deadline)); }
ThreadRef Self() { return NeedCore("Self")->current(); }
bool ParkUntil(Deadline deadline) { return NeedCore("ParkUntil")->ParkUntil(ToNs(deadline)); }

bool IsRunningHere(ThreadRef t) {
  const Core* c = ThisCore();
  return c != nullptr && c->current() == t;
}

bool UnparkIfRunningHere(ThreadRef t) {
  // A uthread waking itself: a poll hook run by a parking uthread (Core::PollWhileParking)
  // finds the segment it waits for. It is running, so the permit is all there is to give,
  // and it goes into the thread's own plain self_permit (only this kthread touches it while
  // the thread runs): no locked instruction to give it, none to take it.
  if (!IsRunningHere(t)) return false;
  t->self_permit = true;  // see Thread::self_permit
  return true;
}

void Unpark(ThreadRef t) {
  if (UnparkIfRunningHere(t)) return;
  // Try the parked case first with the CAS itself, not a load and then a CAS: on another
  // core's thread, a load brings the line in shared and the CAS then needs a second
  // transfer to own it; the CAS alone takes it in one.
  std::uint32_t s = detail::kParkParked;
  if (t->park_state.compare_exchange_strong(s, detail::kParkRunning, std::memory_order_acq_rel)) {
    Ready(t);
    return;
  }
  while (true) {
    if (s == detail::kParkParked) {
      if (t->park_state.compare_exchange_weak(s, detail::kParkRunning, std::memory_order_acq_rel)) {
        Ready(t);
        return;
      }
      continue;
    }
    // Running, or a permit already pending: leave a permit with a release RMW even when one
    // is there (1 -> 1). Returning on a mere load of "notified" loses wake-ups: the thread may
    // consume the old permit, re-check its condition without seeing what the caller wrote
    // before this Unpark (the load need not wait for those stores), and park for good.
    if (t->park_state.compare_exchange_weak(s, detail::kParkNotified, std::memory_order_acq_rel)) return;
  }
}

AccountId CurrentAccount() { return NeedCore("CurrentAccount")->current()->account; }
void SetAccount(AccountId account) { NeedCore("SetAccount")->SetAccount(account); }
void SetAccountAt(AccountId account, std::uint64_t tsc) { NeedCore("SetAccountAt")->SetAccountAt(account, tsc); }
bool InRuntime() { return ThisCore() != nullptr; }
int CurrentCore() {
  Core* c = ThisCore();
  return c != nullptr ? c->index() : -1;
}

Status<void> OnEveryCore(const std::function<Status<void>(int)>& fn, AccountId account) {
  Runtime* rt = Runtime::Current();
  if (rt == nullptr || !InRuntime()) {
    return MakeError(ErrorCode::kInvalidArgument, "OnEveryCore: call it from a uthread of a running runtime");
  }
  const int n = rt->num_cores();
  std::vector<Status<void>> results(static_cast<std::size_t>(n));
  std::vector<JoinHandle> handles;
  Status<void> spawned;
  for (int i = 0; i < n; ++i) {
    auto h = Spawn([&, i] { results[static_cast<std::size_t>(i)] = fn(i); },
                   {.core = i, .account = account, .stealable = false});
    if (!h) {
      spawned = std::unexpected(h.error());
      break;
    }
    handles.push_back(std::move(*h));
  }
  for (auto& h : handles) h.Join();
  if (!spawned) return spawned;
  for (auto& r : results) {
    if (!r) return r;
  }
  return {};
}

}  // namespace junction::sched

// --- core hooks (core_hooks.h) ---------------------------------------------------------------
namespace junction::sched {
void AddPollHook(std::function<void()> hook) { NeedCore("AddPollHook")->AddPollHook(std::move(hook)); }
std::uint64_t PollPassTsc() { return ThisCore()->poll_pass_tsc(); }  // hooks run on a core
bool LocalRunQueueEmpty() { return NeedCore("LocalRunQueueEmpty")->run_queue().Empty(); }
Status<void> AddIdleFd(int fd, std::uint32_t events, std::function<void(std::uint32_t)> callback) {
  return NeedCore("AddIdleFd")->AddIdleFd(fd, events, std::move(callback));
}
}  // namespace junction::sched
