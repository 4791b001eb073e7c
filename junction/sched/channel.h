// channel.h — a bounded multi-producer multi-consumer channel between uthreads.
//
// Send parks while the channel is full, Recv while it is empty; both park the uthread, not
// the kthread. Close() wakes everyone: later Sends fail with kClosed, Recvs drain what is
// buffered and then fail with kClosed. Values are moved in and out; nothing is allocated
// after construction. All methods must be called from uthreads except TrySend/TryRecv/Close,
// which any thread may call.
//
//   Channel<int> ch(16);
//   Spawn([&] { for (int i = 0; i < 3; ++i) (void)ch.Send(i); ch.Close(); });
//   while (auto v = ch.Recv()) use(*v);
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "junction/base/error.h"
#include "junction/sched/spinlock.h"
#include "junction/sched/tsc.h"
#include "junction/sched/wait_queue.h"

namespace junction::sched {

template <typename T>
class Channel {
 public:
  // capacity >= 1.
  explicit Channel(std::size_t capacity) : slots_(capacity < 1 ? 1 : capacity) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  Status<void> Send(T value, Deadline deadline = Deadline::max()) {
    spin_.lock();
    while (count_ == slots_.size() && !closed_) {
      if (!senders_.Wait(ToNs(deadline))) {
        return MakeError(ErrorCode::kTimedOut, "Channel::Send: still full at the deadline");
      }
      spin_.lock();
    }
    return PutLocked(std::move(value));
  }

  Status<T> Recv(Deadline deadline = Deadline::max()) {
    spin_.lock();
    while (count_ == 0 && !closed_) {
      if (!receivers_.Wait(ToNs(deadline))) {
        return MakeError(ErrorCode::kTimedOut, "Channel::Recv: still empty at the deadline");
      }
      spin_.lock();
    }
    return TakeLocked();
  }

  // Never park. kWouldBlock when full (TrySend) or empty (TryRecv).
  Status<void> TrySend(T value) {
    spin_.lock();
    if (count_ == slots_.size() && !closed_) {
      spin_.unlock();
      return MakeError(ErrorCode::kWouldBlock, "Channel::TrySend: full");
    }
    return PutLocked(std::move(value));
  }
  Status<T> TryRecv() {
    spin_.lock();
    if (count_ == 0 && !closed_) {
      spin_.unlock();
      return MakeError(ErrorCode::kWouldBlock, "Channel::TryRecv: empty");
    }
    return TakeLocked();
  }

  void Close() {
    spin_.lock();
    closed_ = true;
    detail::Thread* s = senders_.PopAll();
    detail::Thread* r = receivers_.PopAll();
    spin_.unlock();
    WaitQueue::ReadyAll(s);
    WaitQueue::ReadyAll(r);
  }

  std::size_t capacity() const { return slots_.size(); }

 private:
  static std::int64_t ToNs(Deadline d) { return d == Deadline::max() ? INT64_MAX : DeadlineNs(d); }

  // Called with spin_ held; releases it.
  Status<void> PutLocked(T&& value) {
    if (closed_) {
      spin_.unlock();
      return MakeError(ErrorCode::kClosed, "Channel::Send: the channel is closed");
    }
    slots_[(head_ + count_) % slots_.size()].emplace(std::move(value));
    ++count_;
    detail::Thread* r = receivers_.PopWaiter();
    spin_.unlock();
    if (r != nullptr) Ready(r);
    return {};
  }
  Status<T> TakeLocked() {
    if (count_ == 0) {
      spin_.unlock();
      return MakeError(ErrorCode::kClosed, "Channel::Recv: the channel is closed and drained");
    }
    std::optional<T>& slot = slots_[head_];
    T value = std::move(*slot);
    slot.reset();
    head_ = (head_ + 1) % slots_.size();
    --count_;
    detail::Thread* s = senders_.PopWaiter();
    spin_.unlock();
    if (s != nullptr) Ready(s);
    return value;
  }

  Spinlock spin_;
  std::vector<std::optional<T>> slots_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  bool closed_ = false;
  WaitQueue senders_{&spin_};
  WaitQueue receivers_{&spin_};
};

}  // namespace junction::sched
