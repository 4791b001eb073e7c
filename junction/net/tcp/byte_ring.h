// byte_ring.h — a fixed ring of bytes addressed by offset from its head, for TCP buffers.
//
// The send buffer keeps the bytes from SND.UNA on; the receive buffer keeps in-order bytes at
// the head and out-of-order ones written at their offset beyond. A ring knows its capacity
// from the start but gets its storage only when it first holds bytes (Attach, from the
// engine's per-core BufferPool), so a connection that never carries data — a half-open one of
// a SYN flood above all — costs no buffer memory; storage goes back (Detach) once the ring is
// empty for good. Not synchronised: one core owns it.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <memory>

namespace junction::net::tcp {

class ByteRing {
 public:
  explicit ByteRing(std::size_t capacity) : cap_(capacity) {}
  std::size_t capacity() const { return cap_; }
  std::size_t size() const { return size_; }      // bytes counted from the head
  std::size_t space() const { return cap_ - size_; }
  bool has_storage() const { return data_ != nullptr; }

  // Gives the ring its storage: capacity() bytes. Only without storage.
  void Attach(std::unique_ptr<std::byte[]> storage) {
    assert(data_ == nullptr && storage != nullptr);
    data_ = std::move(storage);
    head_ = 0;
  }
  // Takes the storage back (nullptr if none). Only while empty (size() == 0).
  std::unique_ptr<std::byte[]> Detach() {
    assert(size_ == 0);
    head_ = 0;
    return std::move(data_);
  }

  // Copies n bytes to offset `off` from the head; off + n <= capacity(). Does not change
  // size. Needs storage when n > 0.
  void WriteAt(std::size_t off, const std::byte* src, std::size_t n) {
    if (n == 0) return;
    std::size_t pos = (head_ + off) % cap_;
    const std::size_t first = std::min(n, cap_ - pos);
    std::memcpy(data_.get() + pos, src, first);
    std::memcpy(data_.get(), src + first, n - first);
  }
  // Copies n bytes from offset `off`; off + n <= capacity(). Needs storage when n > 0.
  void ReadAt(std::size_t off, std::byte* dst, std::size_t n) const {
    if (n == 0) return;
    std::size_t pos = (head_ + off) % cap_;
    const std::size_t first = std::min(n, cap_ - pos);
    std::memcpy(dst, data_.get() + pos, first);
    std::memcpy(dst + first, data_.get(), n - first);
  }
  // Appends n <= space() bytes.
  void Append(const std::byte* src, std::size_t n) {
    WriteAt(size_, src, n);
    size_ += n;
  }
  // Counts n more bytes (already written with WriteAt) as part of the ring.
  void Grow(std::size_t n) { size_ += n; }
  // Drops n <= size() bytes from the head.
  void Consume(std::size_t n) {
    if (n == 0) return;
    head_ = (head_ + n) % cap_;
    size_ -= n;
  }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t cap_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace junction::net::tcp
