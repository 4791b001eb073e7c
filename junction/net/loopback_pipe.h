// loopback_pipe.h — the loopback backend's bounded byte ring and one-direction byte pipe.
//
// A Pipe carries one direction of an in-memory TCP connection: a fixed ring (allocated once,
// when the connection is made), a spinlock held only to copy at most 64 KiB, and wait queues
// for parked readers and writers. It models TCP's end-of-stream and abort rules:
//   CloseWrite()      FIN: readers drain what is buffered, then read 0 (EOF).
//   CloseRead(reset)  the reading end is gone: the buffer is dropped; writers fail with
//                     kReset (reset=true: it closed with unread data, TCP sends RST) or
//                     kBrokenPipe (it closed cleanly).
//   Reset()           RST towards the reader: it drains the buffer, then fails with kReset.
// Read/Write are called from uthreads; the Close*/Reset calls from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "junction/sched/spinlock.h"
#include "junction/sched/tsc.h"
#include "junction/sched/wait_queue.h"

namespace junction::net::loopback {

// A fixed-capacity FIFO of bytes. Not synchronised: its owner locks.
class ByteRing {
 public:
  explicit ByteRing(std::size_t capacity) : data_(new std::byte[capacity]), capacity_(capacity) {}
  std::size_t size() const { return count_; }
  std::size_t space() const { return capacity_ - count_; }
  // n <= space().
  void Put(const void* src, std::size_t n);
  // n <= size().
  void Get(void* dst, std::size_t n);
  void Skip(std::size_t n);
  void Clear() { head_ = count_ = 0; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

enum class PipeStatus { kOk, kTimedOut, kReset, kBrokenPipe, kClosed };

struct PipeResult {
  PipeStatus status;
  std::size_t bytes;  // kOk: bytes read (0 = EOF) or written (all)
};

class Pipe {
 public:
  explicit Pipe(std::size_t capacity) : ring_(capacity) {}
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  // Parks until data, EOF, reset or the deadline. buf is not empty.
  PipeResult Read(std::span<std::byte> buf, sched::Deadline deadline);
  // Copies all of buf in, parking while full. kClosed after CloseWrite.
  PipeResult Write(std::span<const std::byte> buf, sched::Deadline deadline);

  void CloseWrite();
  void CloseRead(bool reset);
  void Reset();
  bool HasUnread();

 private:
  sched::Spinlock lock_;
  ByteRing ring_;
  bool write_closed_ = false;
  bool read_closed_ = false;
  bool reset_ = false;  // towards the reader (Reset) or towards writers (CloseRead(true))
  sched::WaitQueue readers_{&lock_};
  sched::WaitQueue writers_{&lock_};
};

inline std::int64_t ToDeadlineNs(sched::Deadline d) {
  return d == sched::Deadline::max() ? INT64_MAX : sched::DeadlineNs(d);
}

}  // namespace junction::net::loopback
