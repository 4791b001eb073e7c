// heap_prealloc.cc — see heap_prealloc.h.
#include "junction/sched/heap_prealloc.h"

#include <malloc.h>

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
#endif
  const std::size_t threshold = 2 * bytes + 128 * 1024;
  return mallopt(M_TRIM_THRESHOLD, threshold > INT_MAX ? INT_MAX : static_cast<int>(threshold)) == 1;
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
  std::vector<std::size_t> touched(static_cast<std::size_t>(rt->num_cores()), 0);
  std::vector<JoinHandle> handles;
  for (int i = 0; i < rt->num_cores(); ++i) {
    auto h = Spawn([&touched, i, bytes] { touched[static_cast<std::size_t>(i)] = PregrowThreadHeap(bytes); },
                   {.core = i, .stealable = false});
    if (!h) {
      for (auto& started : handles) started.Join();
      return std::unexpected(h.error());
    }
    handles.push_back(std::move(*h));
  }
  for (auto& h : handles) h.Join();
  std::size_t sum = 0;
  for (std::size_t t : touched) sum += t;
  return sum;
}

}  // namespace junction::sched
