// buffer_pool.h — one engine's (so one core's) free list of connection ring buffers of one size.
//
// Rings get their storage when a connection first carries data and give it back when it ends
// (byte_ring.h); the pool keeps up to `max_free` of those blocks so that connection churn
// reuses them instead of going to the allocator on the data path. Blocks beyond that are
// freed (an idle core does not sit on a burst's worth of buffers). Counts the bytes handed
// out and the bytes kept, for the memory bound tests and diagnostics. Not synchronised: the
// engine's core owns it.
//
// Prime(n, bytes) fills the free list up to n blocks whose first `bytes` are already mapped in,
// before any traffic: a fresh block's pages each cost a page fault on first touch (1-12 µs in a
// VM), which a load generator would otherwise pay inside its measured window on every new
// connection, and a node in its first burst of connections.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace junction::net::tcp {

class BufferPool {
 public:
  BufferPool(std::size_t block_bytes, std::size_t max_free) : block_(block_bytes), max_free_(max_free) {
    free_.reserve(max_free);  // Give never allocates
  }

  std::size_t block_bytes() const { return block_; }
  // A block of block_bytes(): a kept one if any, else a new one.
  std::unique_ptr<std::byte[]> Take() {
    in_use_ += block_;
    if (!free_.empty()) {
      auto b = std::move(free_.back());
      free_.pop_back();
      return b;
    }
    return std::make_unique_for_overwrite<std::byte[]>(block_);
  }
  // Returns a block from Take (nullptr: nothing to return).
  void Give(std::unique_ptr<std::byte[]> b) {
    if (b == nullptr) return;
    in_use_ -= block_;
    if (free_.size() < max_free_) free_.push_back(std::move(b));
  }

  // Keeps at least n free blocks from now on and makes up to n of them now, the first
  // min(bytes, block_bytes()) of each populated (page tables filled, writable). Control path:
  // allocates, and costs a system call per block.
  void Prime(std::size_t n, std::size_t bytes);

  std::size_t bytes_in_use() const { return in_use_; }       // held by connections
  std::size_t bytes_kept() const { return free_.size() * block_; }  // free, kept for reuse

 private:
  std::size_t block_;
  std::size_t max_free_;
  std::size_t in_use_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> free_;
};

}  // namespace junction::net::tcp
