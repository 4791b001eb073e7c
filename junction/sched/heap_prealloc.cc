// heap_prealloc.cc — see heap_prealloc.h.
#include "junction/sched/heap_prealloc.h"

#include <malloc.h>

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
}  // namespace

bool KeepFreedHeap(std::size_t bytes) {
#if defined(FAASNODE_ASAN)
  // ASan's allocator replaces glibc's: it has no trim threshold (mallopt refuses) and keeps
  // freed memory in its own quarantine. Nothing to do, and nothing to warn about.
  (void)bytes;
  return true;
#else
  const std::size_t threshold = 2 * bytes + 128 * 1024;
  return mallopt(M_TRIM_THRESHOLD, threshold > INT_MAX ? INT_MAX : static_cast<int>(threshold)) == 1;
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
