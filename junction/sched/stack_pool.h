// stack_pool.h — a per-core pool of uthread stacks: mmap'd in slabs, guard page below each,
// committed lazily by the kernel on first touch.
//
// Owned and used by one core (not thread-safe). A stack taken from one pool may be returned
// to another. Slabs are unmapped only when the pool is destroyed (runtime shutdown), so a
// stale pointer into a freed stack stays readable: the runtime relies on that for its
// generation checks (a trimmed stack reads as zeros).
#pragma once

#include <cstddef>
#include <vector>

#include "junction/base/error.h"

namespace junction::sched {

struct StackPoolOptions {
  std::size_t stack_size = 64 * 1024;  // usable bytes, page multiple
  bool guard = true;
  std::size_t cache = 1024;  // free stacks kept committed; the rest are MADV_DONTNEED'd
};

class StackPool {
 public:
  explicit StackPool(const StackPoolOptions& options);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // A stack's lowest usable byte; its top is low + stack_size(). Errors: kResourceExhausted
  // when the kernel refuses memory or mappings (the message says which limit to raise).
  // Inline while a committed stack is free (every spawn takes that path); the rest is a call.
  Status<char*> Get() {
#if !defined(FAASNODE_ASAN)
    if (free_ != nullptr && committed_free_ > 0) [[likely]] {
      FreeNode* node = free_;
      free_ = node->next;
      --free_count_;
      --committed_free_;
      return node->low;
    }
#endif
    return GetSlow();
  }
  // Returns a stack (from any pool of the same runtime). Never fails, never blocks.
  void Put(char* low) {
    if (committed_free_ >= options_.cache) [[unlikely]] {
      PutTrimmed(low);
      return;
    }
    ++committed_free_;
    Push(low);
  }

  // Maps slabs until at least n stacks exist, and maps in the top `touch_bytes` (rounded up to
  // pages) of every free stack, so that uthreads started on them fault on none of those
  // pages. Control path: system calls. Errors: as Get's.
  Status<void> Reserve(std::size_t n, std::size_t touch_bytes);

  std::size_t stack_size() const { return options_.stack_size; }
  std::size_t mapped_stacks() const { return mapped_; }
  std::size_t free_stacks() const { return free_count_; }

 private:
  struct FreeNode {
    FreeNode* next;
    char* low;
  };
  Status<void> MapSlab();
  Status<char*> GetSlow();
  void PutTrimmed(char* low);  // gives the pages back first
  void Push(char* low) {
    auto* node = reinterpret_cast<FreeNode*>(low + options_.stack_size - sizeof(FreeNode));
    node->low = low;
    node->next = free_;
    free_ = node;
    ++free_count_;
  }

  StackPoolOptions options_;
  std::size_t page_;
  std::vector<std::pair<void*, std::size_t>> slabs_;
  FreeNode* free_ = nullptr;
  std::size_t free_count_ = 0;
  std::size_t committed_free_ = 0;
  std::size_t mapped_ = 0;
};

}  // namespace junction::sched
