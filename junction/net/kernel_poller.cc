// kernel_poller.cc — per-core epoll sets of the kernel backend (see kernel_poller.h).
#include "junction/net/kernel_poller.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "junction/sched/core_hooks.h"
#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace junction::net {

Status<std::shared_ptr<CorePoller>> CorePoller::StartOnThisCore(std::uint32_t interval_us,
                                                                std::uint32_t busy_interval_us) {
  const int core = sched::CurrentCore();
  if (core < 0) {
    return MakeError(ErrorCode::kInternal, "CorePoller::StartOnThisCore called outside a uthread");
  }
  const int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) {
    return std::unexpected(
        Error::FromErrno(fmt::format("kernel stack: epoll_create1 for core {}", core)));
  }
  std::shared_ptr<CorePoller> p(
      new CorePoller(core, epfd, sched::NsToCycles(interval_us * 1000.0),
                     sched::NsToCycles(std::max(interval_us, busy_interval_us) * 1000.0)));
  // Level-triggered in the core's set: while ours holds events the core does not sleep.
  if (auto s = sched::AddIdleFd(epfd, EPOLLIN, [p](std::uint32_t) { p->Pass(); }); !s) {
    return std::unexpected(s.error());
  }
  sched::AddPollHook([p] {
    if (p->stopped_) return;
    // The pass's TSC may trail the fresh one Pass() took at its last run by a few hundred ns.
    const std::uint64_t now = sched::PollPassTsc();
    if (now < p->last_pass_tsc_) return;
    const std::uint64_t gap = now - p->last_pass_tsc_;
    if (gap < p->interval_cycles_) return;
    if (gap < p->busy_interval_cycles_ && !sched::LocalRunQueueEmpty()) return;
    p->Pass();
  });
  return p;
}

CorePoller::CorePoller(int core, int epfd, std::uint64_t interval_cycles,
                       std::uint64_t busy_interval_cycles)
    : core_(core),
      epfd_(epfd),
      interval_cycles_(interval_cycles),
      busy_interval_cycles_(busy_interval_cycles) {}

CorePoller::~CorePoller() {
  FreeRetired();
  if (epfd_ >= 0) close(epfd_);
}

Status<void> CorePoller::Add(int fd, std::uint32_t events, PollTarget* target) {
  epoll_event ev{};
  ev.events = events | EPOLLET;
  ev.data.ptr = target;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return std::unexpected(Error::FromErrno(
        fmt::format("kernel stack: adding socket {} to core {}'s epoll", fd, core_)));
  }
  return {};
}

void CorePoller::Remove(int fd) {
  (void)epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
}

void CorePoller::Retire(PollTarget* target) {
  PollTarget* head = retired_.load(std::memory_order_relaxed);
  do {
    target->retired_next_ = head;
  } while (!retired_.compare_exchange_weak(head, target, std::memory_order_release,
                                           std::memory_order_relaxed));
}

void CorePoller::FreeRetired() {
  PollTarget* t = retired_.exchange(nullptr, std::memory_order_acquire);
  while (t != nullptr) {
    PollTarget* next = t->retired_next_;
    delete t;
    t = next;
  }
}

void CorePoller::Pass() {
  if (stopped_) {
    return;
  }
  // A pass from the idle fd (the core woke from its blocking epoll) counts for the hook's
  // interval too: without this the hook's next call, right after the wake-up's dispatch,
  // found the set just drained and paid an empty epoll_wait (about one per request under
  // keep-alive load). Readiness after this point is still seen within the interval, by the
  // hook, or at once by the core's blocking epoll, which holds our fd level-triggered.
  last_pass_tsc_ = sched::Rdtsc();
  FreeRetired();
  constexpr int kBatch = 64;
  epoll_event events[kBatch];
  int n;
  do {
    n = epoll_wait(epfd_, events, kBatch, 0);
    for (int i = 0; i < n; ++i) {
      static_cast<PollTarget*>(events[i].data.ptr)->OnEvents(events[i].events);
    }
  } while (n == kBatch);
}

void CorePoller::Stop() {
  stopped_ = true;
  FreeRetired();
  // Closing the fd also drops it from the core's own epoll set, so a stopped poller can never
  // keep its core awake.
  close(epfd_);
  epfd_ = -1;
}

}  // namespace junction::net
