// core.h — one worker core: its pinned kthread, run queue, inbox, timers, stacks, accounts.
//
// Internal to junction/sched. Every member is owned by the core's own kthread unless marked
// "any thread". Other cores reach a core only through its mailboxes (PushFrom: one
// single-producer ring per other core), its shared Inbox (PushRemote: kthreads outside the
// runtime, and a full mailbox), Kick, the ring of its RunQueue (stealing), and the atomics
// of the close protocol.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "junction/sched/cycle_accounts.h"
#include "junction/sched/inbox.h"
#include "junction/sched/mailbox.h"
#include "junction/sched/run_queue.h"
#include "junction/sched/runtime_config.h"
#include "junction/sched/spinlock.h"
#include "junction/sched/stack_pool.h"
#include "junction/sched/thread.h"
#include "junction/sched/timer_heap.h"

namespace junction::sched {

class Runtime;

// What the context switched to must do for the context switched from, once that one is
// off its stack (so it can safely be queued, parked, unlocked or freed).
struct PostSwitch {
  enum Kind { kNone, kYield, kPark, kBlock, kUnlock, kExit, kExitToJoiner } kind = kNone;
  Spinlock* lock = nullptr;          // kUnlock
  detail::Thread* prev = nullptr;    // filled by SwitchTo
  Core* core = nullptr;              // filled by SwitchTo: a jump never leaves its kthread
};

// Per-core counters: written by the owner only, read by anyone (relaxed).
struct CoreCounters {
  std::uint64_t switches = 0;
  std::uint64_t stolen = 0;         // threads this core took from others
  std::uint64_t remote_wakes = 0;   // threads this core took from its inbox and mailboxes
  std::uint64_t blocks = 0;         // times the kthread blocked (idle)
  std::uint64_t timers_fired = 0;
};

class Core {
 public:
  Core(Runtime* rt, int index, int cpu, const RuntimeConfig& config);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  Status<void> Init();  // eventfd and epoll; called before the kthread starts
  void Main();          // the kthread body: idle loop until the runtime stops

  int index() const { return index_; }
  int cpu() const { return cpu_; }
  detail::Thread* current() const { return current_; }
  Runtime* runtime() const { return rt_; }

  // --- called by the uthread running on this core ---
  void Yield();
  void Park();                              // permit-based; see sched.h
  // Switches to `next` (a thread this core has just taken out of its own queue) and leaves
  // the caller blocked, in no queue and not parked: something that holds a pointer to it
  // (here: the exit of the thread it joins, kJoinDirect) must make it runnable again.
  void BlockAndRun(detail::Thread* next);
  bool ParkUntil(std::int64_t deadline_ns);  // false when the deadline passed first
  void SleepUntil(std::int64_t deadline_ns);
  // Parks the current thread; `lock` is released once it is off its stack. If deadline_ns
  // is not INT64_MAX, arms a timer whose expiry calls on_timeout (which must take the same
  // lock, unlink the thread, and Ready() it). `token` must already be in wait_token.
  void BlockAndUnlock(Spinlock* lock, std::int64_t deadline_ns);
  [[noreturn]] void Exit();
  void SetAccount(AccountId account);
  // SetAccount as of `tsc`, a TSC reading the caller already took on this kthread (no read of
  // its own); one earlier than the current segment's start (a switch came between) counts as
  // that start.
  void SetAccountAt(AccountId account, std::uint64_t tsc);
  std::uint64_t NewToken() { return (++token_counter_ << 8) | static_cast<std::uint64_t>(index_ + 1); }

  // --- this core only ---
  void PushLocal(detail::Thread* t);
  StackPool& pool() { return pool_; }
  void AddPollHook(std::function<void()> hook) { poll_hooks_.push_back(std::move(hook)); }
  // The TSC of the current (or last) idle-loop pass, read before the poll hooks ran.
  std::uint64_t poll_pass_tsc() const { return last_poll_tsc_; }
  Status<void> AddIdleFd(int fd, std::uint32_t events, std::function<void(std::uint32_t)> cb);

  // --- the kthread of core `from` (any other core of this runtime) ---
  // Queue a wake-up or spawn for this core through from's mailbox here; kicks this core only
  // if it is blocked.
  void PushFrom(Core* from, detail::Thread* t);

  // --- any thread ---
  void PushRemote(detail::Thread* t);  // queue a wake-up or spawn for this core (shared inbox)
  void Kick();                         // wake the kthread if it is blocked
  bool sleeping() const { return sleeping_.load(std::memory_order_seq_cst); }
  std::uint64_t published_seq() const { return published_seq_.load(std::memory_order_acquire); }
  const AccountTable& closed_table() const { return tables_[closed_index_]; }
  // The close protocol (Runtime::CloseInterval, one caller at a time): closes the requested
  // interval on this core's behalf when its kthread is blocked idle, without waking it (every
  // cycle since it blocked is idle). True when it did so; false when the kthread is running
  // (it closes at its next switch point) or about to block. Never blocks; the kthread, if it
  // wakes meanwhile, waits the ~100 ns this takes before it touches its accounts.
  bool TryCloseWhileBlocked();
  CoreCounters counters() const;
  RunQueue& run_queue() { return rq_; }

 private:
  friend void Trampoline(detail::ctx::transfer_t t);
  // `now` is a TSC reading, or 0 when nothing needs one (no timers armed, no poll hooks).
  std::uint64_t NowIfNeeded() const;
  detail::Thread* PickNext(std::uint64_t now);
  void SwitchTo(detail::Thread* next, PostSwitch* op, std::uint64_t now);
  static void AfterSwitch(detail::ctx::transfer_t t);
  void HandlePost(PostSwitch* op);
  void FinishPark(detail::Thread* prev);
  void ChargeAt(AccountId account, std::uint64_t now);
  void MaybeClose(std::uint64_t now, AccountId account);
  void DrainInbox();
  bool MailWaiting() const;  // a mailbox has a wake-up
  void DrainMail();
  void RunTimers();
  void ArmTimer(std::int64_t deadline_ns, std::uint64_t token, detail::Thread* t);
  detail::Thread* FindWork();
  bool PollWhileParking(detail::Thread* self, std::int64_t deadline_ns, std::uint64_t now);
  bool TrySteal();
  void BlockIdle();
  void MaybeWakeIdlePeer();
  void Bump(std::atomic<std::uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  Runtime* rt_;
  const int index_;
  const int cpu_;
  // mailboxes_[i]: wake-ups from core i (none from this core itself). Every waker reads this
  // pointer: it sits on this read-only line, away from anything the core keeps writing.
  const std::unique_ptr<Mailbox[]> mailboxes_;
  const int num_cores_;
  const RuntimeConfig config_;

  alignas(64) detail::Thread* current_ = nullptr;
  detail::Thread idle_;  // the kthread's own context: runs the idle loop
  RunQueue rq_;
  Inbox inbox_;
  TimerHeap timers_;
  StackPool pool_;
  std::uint64_t next_timer_tsc_ = UINT64_MAX;
  std::uint64_t last_poll_tsc_ = 0;
  std::uint64_t poll_interval_cycles_;
  std::uint64_t spin_cycles_;
  static constexpr double kStealIntervalNs = 1000;
  std::uint64_t steal_interval_cycles_;
  std::uint64_t park_poll_cycles_;
  std::uint64_t last_steal_tsc_ = 0;
  std::uint64_t token_counter_ = 0;
  std::uint64_t steal_seed_;
  std::uint64_t last_peer_kick_tsc_ = 0;

  // Cycle accounting (see cycle_accounts.h).
  std::uint64_t seg_start_ = 0;
  AccountTable tables_[2];
  int active_ = 0;
  int closed_index_ = 1;
  std::uint64_t closed_seq_ = 0;
  alignas(64) std::atomic<std::uint64_t> published_seq_{0};

  alignas(64) std::atomic<bool> sleeping_{false};
  // Who may touch the cycle accounts: kGateRunning, the kthread (always, while it runs);
  // kGateBlocked, it is blocked in BlockIdle and CloseInterval may take them; kGateClosing,
  // CloseInterval has them (TryCloseWhileBlocked). The CAS hands the accounts over with
  // acquire/release, so neither side ever sees the other's writes half done.
  static constexpr std::uint8_t kGateRunning = 0, kGateBlocked = 1, kGateClosing = 2;
  std::atomic<std::uint8_t> close_gate_{kGateRunning};
  int epfd_ = -1;
  int evfd_ = -1;
  std::vector<std::function<void()>> poll_hooks_;
  std::vector<std::pair<int, std::function<void(std::uint32_t)>>> idle_fds_;

  alignas(64) std::atomic<std::uint64_t> n_switches_{0}, n_stolen_{0}, n_blocks_{0}, n_timers_{0};
  std::atomic<std::uint64_t> n_remote_{0};  // wake-ups taken from the inbox
};

// The core the calling kthread runs, or nullptr outside the runtime. Not inlined on purpose:
// a uthread may resume on another kthread, and the compiler must not cache the TLS address
// across a switch.
Core* ThisCore();
// ThisCore(), or abort with a message naming `what` when called outside a uthread.
Core* NeedCore(const char* what);

void Ready(detail::Thread* t);  // make a blocked thread runnable on its home core; any thread

}  // namespace junction::sched
