// kernel_poller.h — the kernel backend's per-core epoll set and how sockets hang off it.
//
// One CorePoller per runtime core per kernel stack. Its epoll fd holds the core's sockets,
// registered once, edge-triggered, with a PollTarget* as the event's data. The core drains it
// from two places, both on the core's idle context (never concurrently with each other):
// a poll hook (a non-blocking epoll_wait, at most every `interval`, and every
// `busy_interval` while uthreads are queued on the core)
// and, when the core sleeps, the core's own epoll, which holds our fd as an idle fd.
//
// Freeing a socket: its owner removes the fd from the set (any core), then Retire()s its
// PollTarget. Targets are deleted at the start of the poller's next pass, before its next
// epoll_wait, so an event harvested by a pass that raced with the removal still points to
// live memory when that pass dispatches it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "junction/base/error.h"

namespace junction::net {

// Something registered in a CorePoller: a connection, a listening socket, a UDP socket.
class PollTarget {
 public:
  virtual ~PollTarget() = default;
  // On the poller's core, idle context: must not block or park (may Unpark).
  virtual void OnEvents(std::uint32_t events) = 0;

 private:
  friend class CorePoller;
  PollTarget* retired_next_ = nullptr;
};

class CorePoller {
 public:
  // Creates the epoll fd and registers the poll hook and idle fd on the calling uthread's
  // core: call from an unstealable uthread spawned on that core. The hooks keep the returned
  // poller alive until the runtime is destroyed.
  static Status<std::shared_ptr<CorePoller>> StartOnThisCore(std::uint32_t interval_us,
                                                             std::uint32_t busy_interval_us);
  ~CorePoller();
  CorePoller(const CorePoller&) = delete;
  CorePoller& operator=(const CorePoller&) = delete;

  // Any thread. Adds fd edge-triggered for `events` with `target` as its data.
  Status<void> Add(int fd, std::uint32_t events, PollTarget* target);
  // Any thread. Removes fd (errors ignored: closing it removes it anyway).
  void Remove(int fd);
  // Any thread. Takes ownership of `target` (whose fd is already removed and closed) and
  // deletes it on the poller's core after the pass in progress.
  void Retire(PollTarget* target);

  // On this poller's core, from a uthread: stop dispatching, free retired targets, close the
  // epoll fd. The hooks stay registered (the runtime has no way to remove them) as no-ops.
  void Stop();

  int core() const { return core_; }

 private:
  CorePoller(int core, int epfd, std::uint64_t interval_cycles,
             std::uint64_t busy_interval_cycles);
  void Pass();  // one full drain: free retired targets, then dispatch until epoll is empty
  void FreeRetired();

  const int core_;
  int epfd_;
  const std::uint64_t interval_cycles_;
  const std::uint64_t busy_interval_cycles_;
  std::uint64_t last_pass_tsc_ = 0;
  bool stopped_ = false;  // written and read on the poller's core only
  std::atomic<PollTarget*> retired_{nullptr};
};

}  // namespace junction::net
