// heap_prealloc.cc — see heap_prealloc.h.
#include "junction/sched/heap_prealloc.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <vector>

#include "junction/base/pages.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace junction::sched {

namespace {
// Below glibc's default mmap threshold (128 KiB), so every block comes from the arena, and
// large enough that the blocks coalesce into the top chunk when they are freed (no tcache,
// no fastbins).
constexpr std::size_t kBlock = 64 * 1024;
// Blocks up to this size come from the arenas (and stay mapped once freed); larger ones are
// mmapped, as glibc does by default for blocks above its adaptive threshold.
constexpr std::size_t kMmapThreshold = 4 * 1024 * 1024;
}  // namespace

bool KeepFreedHeap(std::size_t bytes) {
#if defined(FAASNODE_ASAN)
  // ASan's allocator replaces glibc's: it has no trim threshold (mallopt refuses) and keeps
  // freed memory in its own quarantine. Nothing to do, and nothing to warn about.
  (void)bytes;
  return true;
#else
  // Setting the trim threshold also stops glibc adapting its mmap threshold, which would
  // otherwise rise to the largest block freed so far (up to 32 MiB): left at 128 KiB, every
  // larger buffer (the energy sampler's per-interval vectors, a body of a few hundred KiB) was
  // an mmap, its page faults and a munmap, each time. Set it where glibc's adaptation would
  // put such blocks, and keep the trim threshold above twice it, as glibc's adaptation does.
  const std::size_t threshold = std::max(2 * bytes + 128 * 1024, 2 * kMmapThreshold);
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) == 1 &&
         mallopt(M_TRIM_THRESHOLD, threshold > INT_MAX ? INT_MAX : static_cast<int>(threshold)) == 1;
#endif
}

std::size_t PregrowThreadHeap(std::size_t bytes) {
  const std::size_t n = (bytes + kBlock - 1) / kBlock;
  std::vector<char*> blocks;
  blocks.reserve(n);
  std::size_t touched = 0;
  const std::size_t page = PageSize();
  for (std::size_t i = 0; i < n; ++i) {
    auto* p = static_cast<char*>(std::malloc(kBlock));
    if (p == nullptr) break;
    // A volatile write per page: the compiler may not drop stores to memory that is freed
    // unread (a plain memset before free is dead code to it).
    for (std::size_t off = 0; off < kBlock; off += page) {
      static_cast<volatile char*>(p)[off] = 0;
      ++touched;
    }
    blocks.push_back(p);
  }
  // Newest first: each block then merges straight into the top chunk.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) std::free(*it);
  return touched;
}

Status<std::size_t> PregrowCoreHeaps() {
  Runtime* rt = Runtime::Current();
  if (rt == nullptr || !InRuntime()) {
    return MakeError(ErrorCode::kInvalidArgument, "PregrowCoreHeaps: call it from a uthread of a running runtime");
  }
  const std::size_t bytes = rt->config().heap_prealloc;
  if (bytes == 0) return std::size_t{0};
  std::atomic<std::size_t> touched{0};
  auto done = OnEveryCore([&](int) -> Status<void> {
    touched.fetch_add(PregrowThreadHeap(bytes), std::memory_order_relaxed);
    return {};
  });
  if (!done) return std::unexpected(done.error());
  return touched.load();
}

}  // namespace junction::sched
