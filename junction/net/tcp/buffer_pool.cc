// buffer_pool.cc — BufferPool::Prime (see buffer_pool.h).
#include "junction/net/tcp/buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 uapi; older libc headers lack the name
#endif

namespace junction::net::tcp {

namespace {

// Maps in every page of [p, p + len) writable, without changing what it holds.
void Populate(std::byte* p, std::size_t len) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + len) & ~(page - 1);
  if (hi > lo && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE) == 0) {
    p[len - 1] = std::byte{0};  // the partial last page, if any (the first holds the
    return;                     // allocator's header: already mapped)
  }
  // Before Linux 5.14: a write per page.
  for (std::size_t off = 0; off < len; off += page) p[off] = std::byte{0};
  p[len - 1] = std::byte{0};
}

}  // namespace

void BufferPool::Prime(std::size_t n) {
  if (n > max_free_) {
    max_free_ = n;
    free_.reserve(max_free_);  // Give still never allocates
  }
  while (free_.size() < n) {
    auto b = std::make_unique_for_overwrite<std::byte[]>(block_);
    Populate(b.get(), block_);
    free_.push_back(std::move(b));
  }
}

}  // namespace junction::net::tcp
