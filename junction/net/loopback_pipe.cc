// loopback_pipe.cc — the in-memory byte pipe of the loopback backend (see loopback_pipe.h).
#include "junction/net/loopback_pipe.h"

#include <algorithm>
#include <cstring>

namespace junction::net::loopback {

void ByteRing::Put(const void* src, std::size_t n) {
  const std::size_t tail = (head_ + count_) % capacity_;
  const std::size_t first = std::min(n, capacity_ - tail);
  std::memcpy(data_.get() + tail, src, first);
  std::memcpy(data_.get(), static_cast<const std::byte*>(src) + first, n - first);
  count_ += n;
}

void ByteRing::Get(void* dst, std::size_t n) {
  const std::size_t first = std::min(n, capacity_ - head_);
  std::memcpy(dst, data_.get() + head_, first);
  std::memcpy(static_cast<std::byte*>(dst) + first, data_.get(), n - first);
  Skip(n);
}

void ByteRing::Skip(std::size_t n) {
  head_ = (head_ + n) % capacity_;
  count_ -= n;
}

namespace {
constexpr std::size_t kMaxCopyUnderLock = 64 * 1024;
}  // namespace

PipeResult Pipe::Read(std::span<std::byte> buf, sched::Deadline deadline) {
  const std::int64_t deadline_ns = ToDeadlineNs(deadline);
  lock_.lock();
  for (;;) {
    if (ring_.size() > 0) {
      const std::size_t n = std::min({buf.size(), ring_.size(), kMaxCopyUnderLock});
      ring_.Get(buf.data(), n);
      sched::detail::Thread* w = writers_.empty() ? nullptr : writers_.PopAll();
      lock_.unlock();
      sched::WaitQueue::ReadyAll(w);
      return {PipeStatus::kOk, n};
    }
    if (reset_) {
      lock_.unlock();
      return {PipeStatus::kReset, 0};
    }
    if (write_closed_) {
      lock_.unlock();
      return {PipeStatus::kOk, 0};
    }
    if (read_closed_) {
      lock_.unlock();
      return {PipeStatus::kClosed, 0};
    }
    if (!readers_.Wait(deadline_ns)) return {PipeStatus::kTimedOut, 0};
    lock_.lock();
  }
}

PipeResult Pipe::Write(std::span<const std::byte> buf, sched::Deadline deadline) {
  const std::int64_t deadline_ns = ToDeadlineNs(deadline);
  std::size_t off = 0;
  lock_.lock();
  for (;;) {
    if (write_closed_) {
      lock_.unlock();
      return {PipeStatus::kClosed, off};
    }
    if (read_closed_) {
      lock_.unlock();
      return {reset_ ? PipeStatus::kReset : PipeStatus::kBrokenPipe, off};
    }
    if (ring_.space() > 0) {
      const std::size_t n = std::min({buf.size() - off, ring_.space(), kMaxCopyUnderLock});
      ring_.Put(buf.data() + off, n);
      off += n;
      sched::detail::Thread* r = readers_.empty() ? nullptr : readers_.PopAll();
      lock_.unlock();
      sched::WaitQueue::ReadyAll(r);
      if (off == buf.size()) return {PipeStatus::kOk, off};
      lock_.lock();
      continue;
    }
    if (!writers_.Wait(deadline_ns)) return {PipeStatus::kTimedOut, off};
    lock_.lock();
  }
}

void Pipe::CloseWrite() {
  lock_.lock();
  write_closed_ = true;
  sched::detail::Thread* r = readers_.PopAll();
  sched::detail::Thread* w = writers_.PopAll();
  lock_.unlock();
  sched::WaitQueue::ReadyAll(r);
  sched::WaitQueue::ReadyAll(w);
}

void Pipe::CloseRead(bool reset) {
  lock_.lock();
  read_closed_ = true;
  if (reset) reset_ = true;
  ring_.Clear();
  sched::detail::Thread* r = readers_.PopAll();
  sched::detail::Thread* w = writers_.PopAll();
  lock_.unlock();
  sched::WaitQueue::ReadyAll(r);
  sched::WaitQueue::ReadyAll(w);
}

void Pipe::Reset() {
  lock_.lock();
  reset_ = true;
  sched::detail::Thread* r = readers_.PopAll();
  sched::detail::Thread* w = writers_.PopAll();
  lock_.unlock();
  sched::WaitQueue::ReadyAll(r);
  sched::WaitQueue::ReadyAll(w);
}

bool Pipe::HasUnread() {
  lock_.lock();
  const bool unread = ring_.size() > 0;
  lock_.unlock();
  return unread;
}

}  // namespace junction::net::loopback
