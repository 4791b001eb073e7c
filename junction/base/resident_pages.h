// resident_pages.h — how much of a memory range is mapped in right now (mincore), for the
// tests that check a range was populated ahead of its use (stacks, TCP rings, memif regions).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace junction {

struct Residency {
  std::size_t resident = 0;  // whole pages inside the range that are mapped in
  std::size_t pages = 0;     // whole pages inside the range
};

// The whole pages inside [p, p + len). A range mincore refuses reads as none resident.
inline Residency ResidentPages(const void* p, std::size_t len) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + len) & ~(page - 1);
  Residency r;
  if (hi <= lo) return r;
  std::vector<unsigned char> vec((hi - lo) / page);
  r.pages = vec.size();
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, vec.data()) != 0) return r;
  for (unsigned char v : vec) r.resident += v & 1;
  return r;
}

}  // namespace junction
