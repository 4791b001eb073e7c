// pages.h — whole pages of a memory range: mapping them in ahead of use (MADV_POPULATE_WRITE)
// and asking how many are mapped in (mincore). Used to keep first-touch page faults (1-12 µs
// each in a VM) off the data path: uthread stacks, TCP rings, memif regions, and by the tests
// that check those were populated.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 uapi; older libc headers lack the name
#endif

namespace junction {

// The whole pages inside [p, p + len): [lo, hi), page-aligned; empty when hi <= lo.
struct PageSpan {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
  std::size_t bytes() const { return hi > lo ? hi - lo : 0; }
  void* addr() const { return reinterpret_cast<void*>(lo); }
};

inline std::size_t PageSize() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

inline PageSpan InnerPages(const void* p, std::size_t len) {
  const auto page = static_cast<std::uintptr_t>(PageSize());
  return PageSpan{(reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1),
                  (reinterpret_cast<std::uintptr_t>(p) + len) & ~(page - 1)};
}

// Maps in every page of `pages` writable without changing what they hold. Returns 0, or the
// errno of madvise: EINVAL on kernels before 5.14 (the caller then touches the pages itself,
// as fits the memory: a write for private memory, a read for shared), ENOMEM if unmapped.
// Blocking, a system call: control path only.
inline int PopulateWritable(PageSpan pages) {
  if (pages.bytes() == 0) return 0;
  return madvise(pages.addr(), pages.bytes(), MADV_POPULATE_WRITE) == 0 ? 0 : errno;
}

struct Residency {
  std::size_t resident = 0;  // whole pages inside the range that are mapped in
  std::size_t pages = 0;     // whole pages inside the range
};

// The whole pages inside [p, p + len). A range mincore refuses reads as none resident.
inline Residency ResidentPages(const void* p, std::size_t len) {
  const PageSpan s = InnerPages(p, len);
  Residency r;
  if (s.bytes() == 0) return r;
  std::vector<unsigned char> vec(s.bytes() / PageSize());
  r.pages = vec.size();
  if (mincore(s.addr(), s.bytes(), vec.data()) != 0) return r;
  for (unsigned char v : vec) r.resident += v & 1;
  return r;
}

}  // namespace junction
