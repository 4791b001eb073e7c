// sync.cc — wait queues and the uthread Mutex, CondVar and WaitGroup built on them.
#include "junction/sched/sync.h"

#include <cassert>

#include "junction/sched/core.h"

namespace junction::sched {

// --- WaitQueue ----------------------------------------------------------------------------

void WaitQueue::Link(detail::Thread* t) {
  t->next = nullptr;
  t->prev = tail_;
  if (tail_ != nullptr) {
    tail_->next = t;
  } else {
    head_ = t;
  }
  tail_ = t;
  t->wait_object = this;
  t->in_wait_queue = true;
}

void WaitQueue::Unlink(detail::Thread* t) {
  if (t->prev != nullptr) {
    t->prev->next = t->next;
  } else {
    head_ = t->next;
  }
  if (t->next != nullptr) {
    t->next->prev = t->prev;
  } else {
    tail_ = t->prev;
  }
  t->next = t->prev = nullptr;
  t->in_wait_queue = false;  // wait_object stays: a racing OnTimeout still needs the lock
}

bool WaitQueue::Wait(std::int64_t deadline_ns) {
  Core* c = ThisCore();
  assert(c != nullptr && "WaitQueue::Wait outside a uthread");
  detail::Thread* self = c->current();
  Link(self);
  self->timed_out = false;
  self->on_timeout = &WaitQueue::OnTimeout;
  self->wait_token.store(c->NewToken(), std::memory_order_release);
  c->BlockAndUnlock(lock_, deadline_ns);
  return !self->timed_out;
}

void WaitQueue::OnTimeout(detail::Thread* t) {
  // The timer won the token: no waker will touch t, but one may have unlinked it already
  // (it lost the token race and moved on). Unlink if still linked.
  auto* q = static_cast<WaitQueue*>(t->wait_object);
  q->lock_->lock();
  if (t->in_wait_queue) q->Unlink(t);
  q->lock_->unlock();
  t->timed_out = true;
  Ready(t);
}

detail::Thread* WaitQueue::PopWaiter() {
  while (detail::Thread* t = head_) {
    Unlink(t);
    if (t->wait_token.exchange(0, std::memory_order_acq_rel) != 0) return t;
    // A timer claimed it; its OnTimeout will find it unlinked and Ready() it.
  }
  return nullptr;
}

detail::Thread* WaitQueue::PopAll() {
  detail::Thread* list = nullptr;
  detail::Thread* last = nullptr;
  while (detail::Thread* t = PopWaiter()) {
    t->next = nullptr;
    if (last != nullptr) {
      last->next = t;
    } else {
      list = t;
    }
    last = t;
  }
  return list;
}

void WaitQueue::ReadyAll(detail::Thread* list) {
  while (list != nullptr) {
    detail::Thread* next = list->next;
    list->next = nullptr;
    Ready(list);
    list = next;
  }
}

// --- Mutex --------------------------------------------------------------------------------

bool Mutex::try_lock() {
  bool expected = false;
  return held_.compare_exchange_strong(expected, true, std::memory_order_acquire);
}

void Mutex::lock() {
  if (try_lock()) return;
  spin_.lock();
  if (try_lock()) {
    spin_.unlock();
    return;
  }
  waiters_.Wait();  // unlock() hands ownership to us: held_ stays true
}

void Mutex::unlock() {
  spin_.lock();
  detail::Thread* next = waiters_.PopWaiter();
  if (next == nullptr) held_.store(false, std::memory_order_release);
  spin_.unlock();
  if (next != nullptr) Ready(next);
}

// --- CondVar ------------------------------------------------------------------------------

bool CondVar::WaitNs(std::unique_lock<Mutex>& lock, std::int64_t deadline_ns) {
  spin_.lock();
  lock.mutex()->unlock();
  const bool notified = waiters_.Wait(deadline_ns);
  lock.mutex()->lock();
  return notified;
}

void CondVar::Wait(std::unique_lock<Mutex>& lock) { WaitNs(lock, INT64_MAX); }

bool CondVar::WaitUntil(std::unique_lock<Mutex>& lock, Deadline deadline) {
  return WaitNs(lock, DeadlineNs(deadline));
}

void CondVar::NotifyOne() {
  spin_.lock();
  detail::Thread* t = waiters_.PopWaiter();
  spin_.unlock();
  if (t != nullptr) Ready(t);
}

void CondVar::NotifyAll() {
  spin_.lock();
  detail::Thread* list = waiters_.PopAll();
  spin_.unlock();
  WaitQueue::ReadyAll(list);
}

// --- WaitGroup ----------------------------------------------------------------------------

void WaitGroup::Add(std::int64_t n) {
  spin_.lock();
  count_ += n;
  assert(count_ >= 0 && "WaitGroup::Done called more times than Add");
  detail::Thread* list = count_ == 0 ? waiters_.PopAll() : nullptr;
  spin_.unlock();
  WaitQueue::ReadyAll(list);
}

void WaitGroup::Wait() { WaitUntil(Deadline::max()); }

bool WaitGroup::WaitUntil(Deadline deadline) {
  const std::int64_t deadline_ns = deadline == Deadline::max() ? INT64_MAX : DeadlineNs(deadline);
  while (true) {
    spin_.lock();
    if (count_ == 0) {
      spin_.unlock();
      return true;
    }
    if (!waiters_.Wait(deadline_ns)) {
      spin_.lock();
      const bool zero = count_ == 0;
      spin_.unlock();
      return zero;
    }
  }
}

}  // namespace junction::sched
