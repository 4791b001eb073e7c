// core.cc — the per-core scheduler: switching, the idle loop, timers, stealing, accounting.
//
// Search order when a core needs work (top to bottom): its remote-wake mailboxes and inbox,
// expired timers, the poll hooks (network), its own run queue, then half of another core's
// ring. Finding nothing, it spins for idle_spin_us and then blocks its kthread in epoll until
// a mailbox or inbox push, a timer, a registered backend fd, or an interval-close request
// kicks it.
#include "junction/sched/core.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>

#include <immintrin.h>

#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

#if defined(FAASNODE_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace junction::sched {
namespace {
thread_local Core* t_core = nullptr;
}  // namespace

__attribute__((noinline)) Core* ThisCore() {
  asm volatile("" ::: "memory");
  return t_core;
}

namespace {
// What Reserve maps in of each preallocated stack: the frames of a request's usual call chain.
constexpr std::size_t kPreallocTouchBytes = 16 * 1024;
}  // namespace

Core::Core(Runtime* rt, int index, int cpu, const RuntimeConfig& config)
    : rt_(rt),
      index_(index),
      cpu_(cpu),
      mailboxes_(new Mailbox[config.cores.size()]),
      num_cores_(static_cast<int>(config.cores.size())),
      config_(config),
      pool_(StackPoolOptions{config.stack_size, config.stack_guard, config.stack_cache}),
      poll_interval_cycles_(NsToCycles(config.poll_interval_us * 1000.0)),
      spin_cycles_(NsToCycles(config.idle_spin_us * 1000.0)),
      steal_interval_cycles_(NsToCycles(kStealIntervalNs)),
      park_poll_cycles_(NsToCycles(config.park_poll_us * 1000.0)),
      steal_seed_(0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(index + 1)) {
  idle_.is_idle_context = true;
  idle_.account = accounts::kPoll;
  idle_.core = this;
}

Core::~Core() {
  if (epfd_ >= 0) close(epfd_);
  if (evfd_ >= 0) close(evfd_);
}

Status<void> Core::Init() {
  evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (evfd_ < 0) return std::unexpected(Error::FromErrno("eventfd for a runtime core"));
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return std::unexpected(Error::FromErrno("epoll_create1 for a runtime core"));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = evfd_;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev) != 0) {
    return std::unexpected(Error::FromErrno("epoll_ctl(eventfd)"));
  }
  return {};
}

Status<void> Core::AddIdleFd(int fd, std::uint32_t events,
                             std::function<void(std::uint32_t)> cb) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return std::unexpected(Error::FromErrno(fmt::format("registering fd {} with core {}", fd, index_)));
  }
  idle_fds_.emplace_back(fd, std::move(cb));
  return {};
}

CoreCounters Core::counters() const {
  CoreCounters c;
  c.switches = n_switches_.load(std::memory_order_relaxed);
  c.stolen = n_stolen_.load(std::memory_order_relaxed);
  c.remote_wakes = n_remote_.load(std::memory_order_relaxed);
  c.blocks = n_blocks_.load(std::memory_order_relaxed);
  c.timers_fired = n_timers_.load(std::memory_order_relaxed);
  return c;
}

// ---------------------------------------------------------------------------------------
// Accounting. ChargeAt gives [seg_start_, now) to `account`; a pending close request splits
// that segment at the requested TSC, so all cores close at (nearly) the same instant and
// every cycle lands in exactly one interval.

void Core::MaybeClose(std::uint64_t now, AccountId account) {
  const std::uint64_t seq = rt_->close_seq();
  if (seq == closed_seq_) return;
  std::uint64_t boundary = rt_->close_tsc();
  if (boundary < seg_start_) boundary = seg_start_;
  if (boundary > now) boundary = now;
  tables_[active_].Add(account, boundary - seg_start_);
  seg_start_ = boundary;
  tables_[active_].Close(boundary);
  closed_index_ = active_;
  active_ ^= 1;
  tables_[active_].Reset(boundary);
  closed_seq_ = seq;
  published_seq_.store(seq, std::memory_order_release);
}

bool Core::TryCloseWhileBlocked() {
  std::uint8_t gate = kGateBlocked;
  if (!close_gate_.compare_exchange_strong(gate, kGateClosing, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
    return false;
  }
  // BlockIdle charged everything up to the block: the rest, up to the boundary, is idle. This
  // CPU's TSC may trail the core's by a few cycles: never close before the block itself.
  MaybeClose(std::max(Rdtsc(), seg_start_), accounts::kIdle);
  close_gate_.store(kGateBlocked, std::memory_order_release);
  return true;
}

void Core::ChargeAt(AccountId account, std::uint64_t now) {
  MaybeClose(now, account);
  tables_[active_].Add(account, now - seg_start_);
  seg_start_ = now;
}

void Core::SetAccount(AccountId account) { SetAccountAt(account, Rdtsc()); }

void Core::SetAccountAt(AccountId account, std::uint64_t tsc) {
  ChargeAt(current_->account, std::max(tsc, seg_start_));
  current_->account = account;
  tables_[active_].Prefetch(account);
}

// ---------------------------------------------------------------------------------------
// Switching.

// `prev` has switched out to park: it is parked now unless an Unpark() came while it was
// switching out, in which case it keeps running (queued again).
__attribute__((always_inline)) inline void Core::FinishPark(detail::Thread* prev) {
  std::uint32_t expected = detail::kParkRunning;
  if (!prev->park_state.compare_exchange_strong(expected, detail::kParkParked,
                                                std::memory_order_acq_rel)) {
    prev->park_state.store(detail::kParkRunning, std::memory_order_relaxed);
    PushLocal(prev);
  }
}

__attribute__((always_inline)) inline void Core::AfterSwitch(detail::ctx::transfer_t t) {
  auto* op = static_cast<PostSwitch*>(t.data);
  detail::Thread* prev = op->prev;
  prev->ctx = t.fctx;
  // The yield's and the join's own cases, kept out of HandlePost's switch: one call fewer on
  // every yield and on every spawn+join.
  if (op->kind == PostSwitch::kYield) [[likely]] {
    if (!prev->is_idle_context) op->core->PushLocal(prev);
    return;
  }
  if (op->kind == PostSwitch::kPark) {
    op->core->FinishPark(prev);
    return;
  }
  if (op->kind == PostSwitch::kExitToJoiner) {
    prev->join_word.store(detail::kJoinExited, std::memory_order_release);
    return;
  }
  if (op->kind == PostSwitch::kBlock) return;
  op->core->HandlePost(op);
}

// Inlined into its callers on purpose: every function that called into the switch before it
// happened returns after it, on a stack the return-address predictor has not seen, and each
// such return costs a mispredict. Fewer frames across the switch, fewer mispredicts.
__attribute__((always_inline)) inline void Core::SwitchTo(detail::Thread* next, PostSwitch* op,
                                                         std::uint64_t now) {
  detail::Thread* prev = current_;
  op->prev = prev;
  op->core = this;
  // A segment is charged when the account changes (or an interval must close): between
  // threads of one account the running segment simply continues, and no TSC read is needed.
  if (prev->account != next->account || rt_->close_seq() != closed_seq_) {
    ChargeAt(prev->account, now != 0 ? now : Rdtsc());
  }
  current_ = next;
  // next->core is not touched here: it sits on the wakers' line of the thread, which a
  // cross-core Unpark has just written, and reading it would cost this core a cache miss on
  // every remote wake-up. Whoever queues a thread on a core sets it (PushLocal, PushFrom,
  // PushRemote, DrainInbox, StealHalf).
  assert(next->core == this);
  Bump(n_switches_);
#if defined(FAASNODE_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(
      op->kind == PostSwitch::kExit || op->kind == PostSwitch::kExitToJoiner ? nullptr : &fake,
      next->stack_low,
                                 next->stack_size);
#endif
  detail::ctx::transfer_t t = detail::ctx::jump_fcontext(next->ctx, op);
#if defined(FAASNODE_ASAN)
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  AfterSwitch(t);
}


void Core::HandlePost(PostSwitch* op) {
  detail::Thread* prev = op->prev;
  // The rare kinds only: AfterSwitch handles the others before calling this.
  switch (op->kind) {
    case PostSwitch::kNone:
    case PostSwitch::kBlock:
    case PostSwitch::kYield:
    case PostSwitch::kPark:
    case PostSwitch::kExitToJoiner:
      break;
    case PostSwitch::kUnlock:
      op->lock->unlock();
      break;
    case PostSwitch::kExit: {
      char* low = prev->stack_low;
      const std::uintptr_t w = prev->join_word.exchange(detail::kJoinExited,
                                                        std::memory_order_acq_rel);
      // From here on `prev` belongs to its joiner, which frees the stack.
      if (w == detail::kJoinDetached) {
        pool_.Put(low);
      } else if ((w & detail::kJoinDirect) != 0) {
        Ready(reinterpret_cast<detail::Thread*>(w & ~detail::kJoinDirect));  // see Exit
      } else if (w != 0) {
        auto* joiner = reinterpret_cast<detail::Thread*>(w);
        std::uint32_t s = joiner->park_state.load(std::memory_order_acquire);
        while (true) {  // Unpark(joiner), inlined to avoid a header cycle
          if (s == detail::kParkParked) {
            if (joiner->park_state.compare_exchange_weak(s, detail::kParkRunning)) {
              Ready(joiner);
              break;
            }
            continue;
          }
          // Running or notified: a release RMW even on a pending permit (see Unpark).
          if (joiner->park_state.compare_exchange_weak(s, detail::kParkNotified)) break;
        }
      }
      break;
    }
  }
}

void Trampoline(detail::ctx::transfer_t t) {
#if defined(FAASNODE_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  Core* c = static_cast<PostSwitch*>(t.data)->core;
  Core::AfterSwitch(t);
  detail::Thread* self = c->current_;
  self->invoke(self->fn);
  ThisCore()->Exit();
}

std::uint64_t Core::NowIfNeeded() const {
  return next_timer_tsc_ != UINT64_MAX || !poll_hooks_.empty() ? Rdtsc() : 0;
}

__attribute__((always_inline)) inline bool Core::MailWaiting() const {
  for (int i = 0; i < num_cores_; ++i) {
    if (i != index_ && mailboxes_[i].MaybeNonEmpty()) return true;
  }
  return false;
}

// Inlined into every switch path: it runs on each yield, and the call was a measurable part
// of one (runtime.md).
__attribute__((always_inline)) inline detail::Thread* Core::PickNext(std::uint64_t now) {
  if (inbox_.MaybeNonEmpty()) DrainInbox();
  if (MailWaiting()) DrainMail();
  if (now != 0) {
    // Timers and poll hooks run on the idle context, never here: the thread switching out
    // may hold a spinlock that a timer's callback needs (released only after the switch).
    if (now >= next_timer_tsc_) return &idle_;
    if (!poll_hooks_.empty() && now - last_poll_tsc_ > poll_interval_cycles_) return &idle_;
  }
  detail::Thread* t = rq_.Pop();
  return t != nullptr ? t : &idle_;
}

__attribute__((always_inline)) inline void Core::Yield() {
  const std::uint64_t now = NowIfNeeded();
  detail::Thread* next = PickNext(now);
  if (next == &idle_ && poll_hooks_.empty() && (now == 0 || now < next_timer_tsc_)) {
    return;  // nothing else to run and no housekeeping due: keep going
  }
  PostSwitch op{PostSwitch::kYield};
  SwitchTo(next, &op, now);
}

__attribute__((always_inline)) inline void Core::Park() {
  detail::Thread* self = current_;
  if (self->TakeSelfPermit()) return;
  std::uint32_t expected = detail::kParkNotified;
  // Look before the locked CAS: a pending permit is the rare case.
  if (self->park_state.load(std::memory_order_acquire) == detail::kParkNotified &&
      self->park_state.compare_exchange_strong(expected, detail::kParkRunning,
                                               std::memory_order_acq_rel)) {
    return;
  }
  PostSwitch op{PostSwitch::kPark};
  const std::uint64_t now = NowIfNeeded();
  SwitchTo(PickNext(now), &op, now);
}

__attribute__((always_inline)) inline void Core::BlockAndRun(detail::Thread* next) {
  PostSwitch op{PostSwitch::kBlock};
  SwitchTo(next, &op, NowIfNeeded());
}

namespace {
void ParkTimeout(detail::Thread* t) {
  std::uint32_t expected = detail::kParkParked;
  if (t->park_state.compare_exchange_strong(expected, detail::kParkRunning,
                                            std::memory_order_acq_rel)) {
    t->timed_out = true;
    Ready(t);
  }
}
}  // namespace

bool Core::ParkUntil(std::int64_t deadline_ns) {
  detail::Thread* self = current_;
  if (self->TakeSelfPermit()) return true;
  // A permit already here is taken with the compare-exchange; without one (the usual case) a
  // load says so without a locked instruction. A permit that lands after the load is found
  // by the park itself (PollWhileParking's check, or the switch-out's, Core::FinishPark).
  std::uint32_t expected = detail::kParkNotified;
  if (self->park_state.load(std::memory_order_acquire) == expected &&
      self->park_state.compare_exchange_strong(expected, detail::kParkRunning,
                                               std::memory_order_acq_rel)) {
    return true;
  }
  const std::uint64_t now = Rdtsc();
  if (deadline_ns <= MonoNsAt(now)) return false;
  if (park_poll_cycles_ != 0 && PollWhileParking(self, deadline_ns, now)) return true;
  const std::uint64_t token = NewToken();
  self->timed_out = false;
  self->on_timeout = &ParkTimeout;
  self->wait_token.store(token, std::memory_order_release);
  ArmTimer(deadline_ns, token, self);
  PostSwitch op{PostSwitch::kPark};
  const std::uint64_t switch_now = Rdtsc();
  SwitchTo(PickNext(switch_now), &op, switch_now);
  // Woken by Unpark or by the timer; retire the token so a pending timer does nothing.
  self->wait_token.store(0, std::memory_order_release);
  return !self->timed_out;
}

void Core::SleepUntil(std::int64_t deadline_ns) {
  if (deadline_ns <= MonoNs()) {
    Yield();
    return;
  }
  detail::Thread* self = current_;
  const std::uint64_t token = NewToken();
  self->on_timeout = nullptr;
  self->wait_token.store(token, std::memory_order_release);
  ArmTimer(deadline_ns, token, self);
  PostSwitch op{PostSwitch::kBlock};
  const std::uint64_t now = Rdtsc();
  SwitchTo(PickNext(now), &op, now);
}

void Core::BlockAndUnlock(Spinlock* lock, std::int64_t deadline_ns) {
  detail::Thread* self = current_;
  if (deadline_ns != INT64_MAX) {
    ArmTimer(deadline_ns, self->wait_token.load(std::memory_order_relaxed), self);
  }
  PostSwitch op{PostSwitch::kUnlock, lock};
  const std::uint64_t now = NowIfNeeded();
  SwitchTo(PickNext(now), &op, now);
}

void Core::Exit() {
  const std::uint64_t now = NowIfNeeded();
  // A joiner parked on this core: claim its wake-up (so nobody else queues it) and switch
  // straight to it, saving a trip through the idle loop.
  const std::uintptr_t w = current_->join_word.load(std::memory_order_acquire);
  if ((w & detail::kJoinDirect) != 0) {
    // An unparked joiner (kJoinDirect) is ours to resume: straight to it if it lives here;
    // otherwise kExit's post-switch publishes the exit and queues it at home.
    auto* joiner = reinterpret_cast<detail::Thread*>(w & ~detail::kJoinDirect);
    if (joiner->core == this) {
      PostSwitch op{PostSwitch::kExitToJoiner};
      SwitchTo(joiner, &op, now);
      __builtin_unreachable();
    }
  } else if (w > detail::kJoinDetached) {
    auto* joiner = reinterpret_cast<detail::Thread*>(w);
    std::uint32_t parked = detail::kParkParked;
    if (joiner->core == this &&
        joiner->park_state.compare_exchange_strong(parked, detail::kParkRunning,
                                                   std::memory_order_acq_rel)) {
      PostSwitch op{PostSwitch::kExitToJoiner};
      SwitchTo(joiner, &op, now);
      __builtin_unreachable();
    }
  }
  PostSwitch op{PostSwitch::kExit};
  SwitchTo(PickNext(now), &op, now);
  __builtin_unreachable();
}

// ---------------------------------------------------------------------------------------
// Queues and wake-ups.

void Core::PushLocal(detail::Thread* t) {
  if (t->core != this) t->core = this;
  rq_.Push(t);
  // More work here than this core can run right now, and a peer is asleep: wake one so it
  // steals. The common "nobody sleeps" answer is looked at here, without a call.
  if (rt_->num_sleeping().load(std::memory_order_relaxed) != 0) MaybeWakeIdlePeer();
}

void Core::MaybeWakeIdlePeer() {
  // Throttled so a burst of spawns costs one eventfd write, not one per spawn.
  if (rq_.RingSizeHint() < 2) return;
  const std::uint64_t now = Rdtsc();
  if (now - last_peer_kick_tsc_ < spin_cycles_) return;
  last_peer_kick_tsc_ = now;
  for (int i = 0; i < rt_->num_cores(); ++i) {
    Core* peer = rt_->core(i);
    if (peer != this && peer->sleeping()) {
      peer->Kick();
      return;
    }
  }
}

void Core::PushFrom(Core* from, detail::Thread* t) {
  if (t->core != this) t->core = this;
  if (!mailboxes_[from->index_].Push(t)) inbox_.Push(t);  // full: the shared inbox takes it
  // Dekker with BlockIdle: the push, then the look at sleeping_; BlockIdle stores sleeping_
  // and then looks at the mailboxes. A polling core is never kicked (no system call).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_relaxed)) Kick();
}

void Core::PushRemote(detail::Thread* t) {
  if (t->core != this) t->core = this;
  inbox_.Push(t);
  if (sleeping_.load(std::memory_order_seq_cst)) Kick();
}

void Core::Kick() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(evfd_, &one, sizeof(one));
}

// The public Yield and Park (sched.h) live here so that the core's switch path inlines into
// them (see SwitchTo).
Core* NeedCore(const char* what) {
  Core* c = ThisCore();
  if (c == nullptr) {
    std::fprintf(stderr, "junction::sched::%s called outside a uthread; call it from code "
                 "running inside Runtime::Run\n", what);
    std::abort();
  }
  return c;
}

namespace {
// t_core read in place, without ThisCore()'s call. Only for the public Yield, Park and Join
// below: each reads it once, on entry, before its switch (Join reads it again after, through
// ThisCore()), and they are never inlined into a caller that could keep the thread-local's
// address across a switch (after which the uthread may run on another kthread).
__attribute__((always_inline)) inline Core* CoreOnEntry(const char* what) {
  Core* c = t_core;
  if (c == nullptr) [[unlikely]] return NeedCore(what);  // aborts with the message
  return c;
}
}  // namespace

__attribute__((noinline)) void Yield() { CoreOnEntry("Yield")->Yield(); }
__attribute__((noinline)) void Park() { CoreOnEntry("Park")->Park(); }

// Here, not in sched.cc, for the same reason as Yield and Park: the direct join's switch
// (BlockAndRun) inlines into it, one frame fewer to return through after the switch.
__attribute__((noinline)) void JoinHandle::Join() {
  assert(t_ != nullptr && "Join on an empty or already joined handle");
  Core* c = CoreOnEntry("JoinHandle::Join");
  detail::Thread* t = std::exchange(t_, nullptr);
  const auto self = reinterpret_cast<std::uintptr_t>(c->current());
  if (c->run_queue().TakeIfNext(t)) {
    // Queued here and not running: only t's own exit writes join_word, and t cannot exit
    // before it runs, which is now, right after this store (no atomic RMW needed). This
    // thread then waits unparked (kJoinDirect): t's exit, on this core or any other, is the
    // only thing that makes it runnable again, after publishing kJoinExited.
    t->join_word.store(self | detail::kJoinDirect, std::memory_order_relaxed);
    c->BlockAndRun(t);
    while (t->join_word.load(std::memory_order_acquire) != detail::kJoinExited) Park();
  } else if (std::uintptr_t expected = 0;
             t->join_word.compare_exchange_strong(expected, self, std::memory_order_acq_rel)) {
    while (t->join_word.load(std::memory_order_acquire) != detail::kJoinExited) Park();
  }
  ThisCore()->pool().Put(t->stack_low);
}

void Ready(detail::Thread* t) {
  Core* home = t->core;
  Core* self = ThisCore();
  if (self == home) {
    home->PushLocal(t);
  } else if (self != nullptr) {
    home->PushFrom(self, t);  // another core of the runtime: its mailbox at home
  } else {
    home->PushRemote(t);  // a kthread outside the runtime: the shared inbox
  }
}

void Core::DrainInbox() {
  // Counted here, by the owner, rather than by the pushers: a shared counter would cost every
  // remote wake-up a contended cache line.
  detail::Thread* t = inbox_.TakeAll();
  while (t != nullptr) {
    detail::Thread* next = t->mpsc_next.load(std::memory_order_relaxed);
    if (t->core != this) t->core = this;
    rq_.Push(t);
    Bump(n_remote_);
    t = next;
  }
}


void Core::DrainMail() {
  // The wakers set t->core before pushing; nothing here touches the threads' wakers' line.
  for (int i = 0; i < num_cores_; ++i) {
    if (i == index_) continue;
    if (std::uint32_t n = mailboxes_[i].Drain([this](detail::Thread* t) { rq_.Push(t); })) {
      n_remote_.store(n_remote_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
  }
}

void Core::ArmTimer(std::int64_t deadline_ns, std::uint64_t token, detail::Thread* t) {
  timers_.Arm(deadline_ns, token, t);
  if (timers_.NextDeadlineNs() == deadline_ns) {
    // Check a little early rather than late: the TSC estimate is only a hint; RunTimers
    // compares real clock readings.
    const std::int64_t delta = deadline_ns - MonoNs();
    const std::uint64_t now = Rdtsc();
    next_timer_tsc_ = delta <= 0 ? now : now + NsToCycles(static_cast<double>(delta) * 0.999);
  }
}

void Core::RunTimers() {
  const std::int64_t now_ns = MonoNs();
  while (!timers_.empty() && timers_.NextDeadlineNs() <= now_ns) {
    TimerHeap::Entry e = timers_.PopMin();
    std::uint64_t token = e.token;
    if (e.thread->wait_token.compare_exchange_strong(token, 0, std::memory_order_acq_rel)) {
      Bump(n_timers_);
      if (e.thread->on_timeout != nullptr) {
        e.thread->on_timeout(e.thread);
      } else {
        e.thread->timed_out = true;
        Ready(e.thread);
      }
    }
  }
  if (timers_.empty()) {
    next_timer_tsc_ = UINT64_MAX;
  } else {
    const std::int64_t delta = timers_.NextDeadlineNs() - now_ns;
    next_timer_tsc_ = Rdtsc() + NsToCycles(static_cast<double>(delta) * 0.999);
  }
}

bool Core::TrySteal() {
  const int n = rt_->num_cores();
  if (n < 2) return false;
  steal_seed_ ^= steal_seed_ << 13;
  steal_seed_ ^= steal_seed_ >> 7;
  steal_seed_ ^= steal_seed_ << 17;
  const int start = static_cast<int>(steal_seed_ % static_cast<std::uint64_t>(n));
  for (int i = 0; i < n; ++i) {
    Core* victim = rt_->core((start + i) % n);
    if (victim == this || victim->rq_.RingSizeHint() == 0) continue;
    if (std::uint32_t got = victim->rq_.StealHalf(rq_, this)) {
      n_stolen_.store(n_stolen_.load(std::memory_order_relaxed) + got, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

namespace {
// What the poll hooks may use of the parking uthread's stack (a dpdk pass with full bursts
// and a fault injector's held frames takes ~8 KiB): with less left the uthread parks the
// usual way and the idle loop polls on its own stack.
constexpr std::uintptr_t kParkPollStackBytes = 24 * 1024;
}  // namespace

// A uthread about to park on a core with nothing else to do (the usual case of a request
// sent and its response awaited) runs the poll passes itself for up to park_poll_us, on its
// own stack: when a hook wakes it (a socket's IoWaiter Unparks it: a permit, since it is
// running), it goes on without the two context switches of parking and being switched back
// to, and without the idle loop's pass around the port's receive burst. It gives up, and
// parks the usual way, as soon as anything else wants the core: a queued uthread, a remote
// wake-up, a timer due, an interval to close, queued work on another core to steal, or its
// deadline. Only a kRuntime uthread polls (an invocation's account would pay for the network
// stack's work); the passes are charged as the idle loop charges its own: to kRuntime when
// they end in this wake-up, to kPoll when they give up.
bool Core::PollWhileParking(detail::Thread* self, std::int64_t deadline_ns, std::uint64_t now) {
  if (poll_hooks_.empty() || self->account != accounts::kRuntime || rt_->stopping()) return false;
  auto wanted = [this](std::uint64_t t) {  // by a uthread, a wake-up, a timer or a close
    return !rq_.Empty() || inbox_.MaybeNonEmpty() || MailWaiting() || t >= next_timer_tsc_ ||
           rt_->close_seq() != closed_seq_;
  };
  // Under load the queue is seldom empty: then nothing is charged or computed here.
  if (wanted(now)) return false;
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  if (sp - reinterpret_cast<std::uintptr_t>(self->stack_low) < kParkPollStackBytes) return false;
  ChargeAt(accounts::kRuntime, now);  // the uthread's own run up to here
  // Up to the deadline when it is nearer (a wait with no deadline has INT64_MAX: converted to
  // cycles it would overflow).
  const std::int64_t left_ns = deadline_ns - MonoNsAt(now);
  const std::uint64_t budget =
      left_ns >= static_cast<std::int64_t>(config_.park_poll_us) * 1000
          ? park_poll_cycles_
          : NsToCycles(static_cast<double>(left_ns));
  const std::uint64_t start = now;
  std::uint64_t next_peer_look = now + steal_interval_cycles_;
  for (std::uint32_t pass = 1;; ++pass) {
    if (wanted(now) || now - start >= budget) break;
    if (now >= next_peer_look) {  // what the idle loop would steal: leave it to the idle loop
      next_peer_look = now + steal_interval_cycles_;
      bool queued = false;
      for (int i = 0; i < num_cores_ && !queued; ++i) {
        queued = i != index_ && rt_->core(i)->rq_.RingSizeHint() != 0;
      }
      if (queued) break;
    }
    last_poll_tsc_ = now;
    for (auto& hook : poll_hooks_) hook();
    if (self->TakeSelfPermit()) return true;  // a hook woke this very uthread: no locked instruction
    std::uint32_t notified = detail::kParkNotified;
    if (self->park_state.load(std::memory_order_acquire) == notified &&
        self->park_state.compare_exchange_strong(notified, detail::kParkRunning,
                                                 std::memory_order_acq_rel)) {
      return true;
    }
    // The TSC every fourth pass: a read costs ~20 ns here, a third of an empty pass, and the
    // hooks' clock and this loop's bounds need no finer grain than ~0.2 us.
    if (pass % 4 == 0) now = Rdtsc();
  }
  // Gave up: the passes so far were polling (had they woken it, runtime work, as the idle
  // loop's stretch before a uthread it found).
  ChargeAt(accounts::kPoll, now);
  return false;
}

detail::Thread* Core::FindWork() {
  if (inbox_.MaybeNonEmpty()) DrainInbox();
  DrainMail();
  const std::uint64_t now = Rdtsc();
  if (now >= next_timer_tsc_) RunTimers();
  last_poll_tsc_ = now;
  for (auto& hook : poll_hooks_) hook();
  if (detail::Thread* t = rq_.Pop()) return t;
  // Looking at other cores' queues costs cache misses on lines their owners keep writing:
  // an idle core does it at most every kStealIntervalNs, not on every pass.
  if (now - last_steal_tsc_ < steal_interval_cycles_) return nullptr;
  last_steal_tsc_ = now;
  if (TrySteal()) return rq_.Pop();
  return nullptr;
}

void Core::BlockIdle() {
  std::int64_t timeout_ns = -1;  // forever
  if (!timers_.empty()) {
    const std::int64_t until = timers_.NextDeadlineNs() - MonoNs();
    const std::int64_t spin_ns = static_cast<std::int64_t>(config_.timer_spin_us) * 1000;
    if (until <= spin_ns) return;  // a timer is close: keep spinning so it fires on time
    timeout_ns = until - spin_ns;
  }
  ChargeAt(accounts::kPoll, Rdtsc());
  idle_.account = accounts::kIdle;
  sleeping_.store(true, std::memory_order_seq_cst);
  rt_->num_sleeping().fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // see PushFrom
  const bool wake_pending = inbox_.MaybeNonEmpty() || MailWaiting() || rt_->stopping() ||
                            rt_->close_seq() != closed_seq_;
  epoll_event events[8];
  int n = 0;
  if (!wake_pending) {
    Bump(n_blocks_);
    // From here until the kthread takes the gate back, CloseInterval closes this core's
    // intervals itself instead of kicking it awake 100 times a second on an idle node (each a
    // wake-up of this CPU and a wait in the sampler). Opened after the wake_pending check,
    // which reads closed_seq_: a close requested meanwhile is done through the gate.
    close_gate_.store(kGateBlocked, std::memory_order_release);
    timespec ts{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
    n = epoll_pwait2(epfd_, events, 8, timeout_ns < 0 ? nullptr : &ts, nullptr);
    if (n < 0 && errno == ENOSYS) {  // kernels before 5.11: millisecond timeouts, rounded up
      n = epoll_wait(epfd_, events, 8, timeout_ns < 0 ? -1 : static_cast<int>((timeout_ns + 999'999) / 1'000'000));
    }
  }
  if (!wake_pending) {
    std::uint8_t gate = kGateBlocked;
    while (!close_gate_.compare_exchange_weak(gate, kGateRunning, std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
      gate = kGateBlocked;  // CloseInterval is closing this core's interval (~100 ns)
      _mm_pause();
    }
  }
  sleeping_.store(false, std::memory_order_seq_cst);
  rt_->num_sleeping().fetch_sub(1, std::memory_order_seq_cst);
  // Close first: the blocked stretch up to the requested boundary belongs to the old interval.
  MaybeClose(Rdtsc(), accounts::kIdle);
  ChargeAt(accounts::kIdle, Rdtsc());
  idle_.account = accounts::kPoll;
  for (int i = 0; i < n; ++i) {
    if (events[i].data.fd == evfd_) {
      std::uint64_t v;
      [[maybe_unused]] ssize_t r = read(evfd_, &v, sizeof(v));
      continue;
    }
    for (auto& [fd, cb] : idle_fds_) {
      if (fd == events[i].data.fd) cb(events[i].events);
    }
  }
}

void Core::Main() {
  t_core = this;
  if (config_.stack_prealloc > 0) {
    if (auto r = pool_.Reserve(config_.stack_prealloc, kPreallocTouchBytes); !r) {
      // Only an optimisation: stacks are still mapped on demand.
      fmt::print(stderr, "runtime: core {}: preallocating {} stacks failed ({}); continuing\n",
                 index_, config_.stack_prealloc, r.error().message());
    }
  }
  // The kernel may defer a blocked thread's timeout by its timer slack (50 us by default):
  // more than the whole timer budget. Ask for none.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
#if defined(FAASNODE_ASAN)
  pthread_attr_t attr;
  pthread_getattr_np(pthread_self(), &attr);
  void* addr;
  size_t size;
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  idle_.stack_low = static_cast<char*>(addr);
  idle_.stack_size = size;
#endif
  current_ = &idle_;
  seg_start_ = Rdtsc();
  tables_[active_].Reset(seg_start_);
  std::uint64_t spin_start = 0;
  while (!rt_->stopping()) {
    detail::Thread* t = FindWork();
    if (t != nullptr) {
      // The loop's stretch goes to kRuntime. SwitchTo charges it (with a TSC read) only where
      // the account changes or an interval must close: to a kRuntime uthread the segment just
      // goes on, and the woken uthread's first instruction comes ~20 ns sooner.
      idle_.account = accounts::kRuntime;
      PostSwitch op{PostSwitch::kNone};
      SwitchTo(t, &op, 0);
      // Back on the idle context. The segment since the last charge may span uthreads that
      // shared kRuntime with us; close it before the idle loop's account changes.
      ChargeAt(accounts::kRuntime, Rdtsc());
      idle_.account = accounts::kPoll;
      spin_start = 0;
      continue;
    }
    // The pass's own TSC reading is recent enough for the spin budget; a pending close
    // needs the present (its boundary is clamped to the time given).
    const std::uint64_t now = last_poll_tsc_;
    if (rt_->close_seq() != closed_seq_) MaybeClose(Rdtsc(), idle_.account);
    if (spin_start == 0) spin_start = now;
    if (now - spin_start < spin_cycles_) {
      // Between full passes (which also look at other cores' queues, whose cache lines their
      // owners keep writing), watch only this core's own inbox and queue for a short while:
      // a wake-up from another core is seen within a few loads, not a cache miss per pass.
      for (int i = 0; i < 1024; ++i) {
        if (inbox_.MaybeNonEmpty() || MailWaiting() || rt_->stopping() || !poll_hooks_.empty()) break;
        if ((i & 63) == 63 && Rdtsc() >= next_timer_tsc_) break;
        asm volatile("" ::: "memory");
      }
      continue;
    }
    BlockIdle();
    spin_start = 0;
  }
  ChargeAt(idle_.account, Rdtsc());
  t_core = nullptr;
}

}  // namespace junction::sched
