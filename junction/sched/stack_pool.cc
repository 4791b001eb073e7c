// stack_pool.cc — slab mapping, guard pages and RSS trimming for uthread stacks.
#include "junction/sched/stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#if defined(FAASNODE_ASAN)
#include <sanitizer/asan_interface.h>
#endif
#include <fmt/format.h>

#include "junction/base/pages.h"

namespace junction::sched {
namespace {
constexpr std::size_t kStacksPerSlab = 16;
}

StackPool::StackPool(const StackPoolOptions& options)
    : options_(options), page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {}

Status<void> StackPool::Reserve(std::size_t n, std::size_t touch_bytes) {
  while (mapped_ < n) {
    if (auto s = MapSlab(); !s) return s;
  }
  const std::size_t touch =
      std::min(options_.stack_size, (touch_bytes + page_ - 1) / page_ * page_);
  if (touch == 0) return {};
  for (FreeNode* node = free_; node != nullptr; node = node->next) {
    char* top = node->low + options_.stack_size;
    if (PopulateWritable(PageSpan{reinterpret_cast<std::uintptr_t>(top - touch),
                                  reinterpret_cast<std::uintptr_t>(top)}) != 0) {
      // Before Linux 5.14: write the pages (below the free-list node at the very top).
      std::memset(top - touch, 0, touch - sizeof(FreeNode));
    }
  }
  return {};
}

StackPool::~StackPool() {
  for (auto [addr, len] : slabs_) munmap(addr, len);
}

Status<void> StackPool::MapSlab() {
  const std::size_t guard = options_.guard ? page_ : 0;
  const std::size_t stride = options_.stack_size + guard;
  const std::size_t len = stride * kStacksPerSlab;
  void* mem = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    return MakeError(ErrorCode::kResourceExhausted,
                     fmt::format("mapping {} KiB of uthread stacks failed: {}; lower "
                                 "runtime.stack_size_kib or the number of live uthreads",
                                 len / 1024, std::strerror(errno)));
  }
  char* base = static_cast<char*>(mem);
  for (std::size_t i = 0; i < kStacksPerSlab; ++i) {
    char* slot = base + i * stride;
    if (guard != 0 && mprotect(slot, guard, PROT_NONE) != 0) {
      const int err = errno;
      // Stacks already guarded in this slab are still usable: keep them.
      slabs_.emplace_back(mem, len);
      if (i > 0) return {};
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("guard page for a uthread stack refused ({}): the kernel's "
                                   "map limit is reached; raise it (sysctl -w "
                                   "vm.max_map_count=262144) or set runtime.stack_guard = false",
                                   std::strerror(err)));
    }
    Push(slot + guard);
    ++mapped_;
  }
  slabs_.emplace_back(mem, len);
  return {};
}

Status<char*> StackPool::GetSlow() {
  if (free_ == nullptr) {
    if (auto s = MapSlab(); !s) return std::unexpected(s.error());
  }
  FreeNode* node = free_;
  free_ = node->next;
  --free_count_;
  if (committed_free_ > 0) --committed_free_;
#if defined(FAASNODE_ASAN)
  // A thread that exited by switching away never returned from its frames: their redzones are
  // still poisoned in this memory. A fresh thread starts on a clean stack.
  ASAN_UNPOISON_MEMORY_REGION(node->low, options_.stack_size);
#endif
  return node->low;
}

void StackPool::PutTrimmed(char* low) {
  // The node Push writes re-commits only the top page.
  madvise(low, options_.stack_size, MADV_DONTNEED);
  Push(low);
}

}  // namespace junction::sched
