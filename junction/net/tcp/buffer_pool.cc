// buffer_pool.cc — BufferPool::Prime (see buffer_pool.h).
#include "junction/net/tcp/buffer_pool.h"

#include <algorithm>

#include "junction/base/pages.h"

namespace junction::net::tcp {

namespace {

// Maps in every page of [p, p + len) writable, without changing what it holds (the first,
// partial page holds the allocator's header: already mapped).
void Populate(std::byte* p, std::size_t len) {
  if (PopulateWritable(InnerPages(p, len)) != 0) {
    for (std::size_t off = 0; off < len; off += PageSize()) p[off] = std::byte{0};  // < 5.14
  }
  p[len - 1] = std::byte{0};  // the partial last page, if any
}

}  // namespace

void BufferPool::Prime(std::size_t n, std::size_t bytes) {
  if (n > max_free_) {
    max_free_ = n;
    free_.reserve(max_free_);  // Give still never allocates
  }
  while (free_.size() < n) {
    auto b = std::make_unique_for_overwrite<std::byte[]>(block_);
    Populate(b.get(), std::min(bytes, block_));
    free_.push_back(std::move(b));
  }
}

}  // namespace junction::net::tcp
