// byte_ring.h — a fixed ring of bytes addressed by offset from its head, for TCP buffers.
//
// The send buffer keeps the bytes from SND.UNA on; the receive buffer keeps in-order bytes at
// the head and out-of-order ones written at their offset beyond. Allocated once per
// connection; no allocation afterwards. Not synchronised: one core owns it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace junction::net::tcp {

class ByteRing {
 public:
  explicit ByteRing(std::size_t capacity)
      : data_(std::make_unique_for_overwrite<std::byte[]>(capacity)), cap_(capacity) {}
  std::size_t capacity() const { return cap_; }
  std::size_t size() const { return size_; }      // bytes counted from the head
  std::size_t space() const { return cap_ - size_; }

  // Copies n bytes to offset `off` from the head; off + n <= capacity(). Does not change size.
  void WriteAt(std::size_t off, const std::byte* src, std::size_t n) {
    std::size_t pos = (head_ + off) % cap_;
    const std::size_t first = std::min(n, cap_ - pos);
    std::memcpy(data_.get() + pos, src, first);
    std::memcpy(data_.get(), src + first, n - first);
  }
  // Copies n bytes from offset `off`; off + n <= capacity().
  void ReadAt(std::size_t off, std::byte* dst, std::size_t n) const {
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
