// memif_prefault.cc — see memif_prefault.h.
#include "junction/net/dpdk/memif_prefault.h"

#include <rte_ethdev.h>
#include <sys/mman.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "junction/base/pages.h"

namespace junction::net::dpdk {

Status<std::vector<MappedRange>> MemifRegionMappings() {
  std::ifstream maps("/proc/self/maps");
  if (!maps) {
    return MakeError(ErrorCode::kUnavailable,
                     "memif regions: cannot read /proc/self/maps (is /proc mounted?)");
  }
  std::vector<MappedRange> out;
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("memif_region_") == std::string::npos) continue;
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) != 3 || hi <= lo) continue;
    if (perms[0] != 'r' || perms[1] != 'w') continue;  // memif maps its regions read-write
    out.push_back(MappedRange{lo, hi});
  }
  return out;
}

Status<std::size_t> PrefaultMemifRegions() {
  auto ranges = MemifRegionMappings();
  if (!ranges) return std::unexpected(ranges.error());
  std::size_t total = 0;
  for (const MappedRange& r : *ranges) {
    const PageSpan pages{r.lo, r.hi};  // mappings are page-aligned
    if (const int err = PopulateWritable(pages); err == EINVAL) {
      // A kernel before 5.14: one read per page maps it (shared memfd pages map writable;
      // a write could race with the peer's use of the rings).
      const volatile char* p = static_cast<const volatile char*>(pages.addr());
      for (std::size_t off = 0; off < pages.bytes(); off += PageSize()) (void)p[off];
    } else if (err != 0) {
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("memif prefault: madvise(MADV_POPULATE_WRITE) on {:#x}-{:#x}: {}",
                                   r.lo, r.hi, std::strerror(err)));
    }
    total += pages.bytes();
  }
  return total;
}

MemifLinkWatcher::MemifLinkWatcher(std::uint16_t port, std::chrono::milliseconds period)
    : port_(port), period_(period), thread_([this] { Run(); }) {}

MemifLinkWatcher::~MemifLinkWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::uint64_t MemifLinkWatcher::ups() const {
  std::lock_guard lock(mu_);
  return ups_;
}

void MemifLinkWatcher::Run() {
  pthread_setname_np(pthread_self(), "faasnode-memif");
  bool was_up = false;
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    rte_eth_link link{};
    const bool up = rte_eth_link_get_nowait(port_, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
    const bool came_up = up && !was_up;
    was_up = up;
    if (came_up) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = PrefaultMemifRegions();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r) {
        spdlog::info("memif port {}: link up; {:.1f} MiB of shared rings mapped in ahead of the "
                     "data path in {:.1f} ms",
                     port_, static_cast<double>(*r) / (1 << 20), ms);
      } else {
        spdlog::warn("{}; the first frames through each buffer page will fault on the core instead",
                     r.error().message());
      }
    }
    lock.lock();
    if (came_up) ++ups_;
    cv_.wait_for(lock, period_, [this] { return stop_; });
  }
}

}  // namespace junction::net::dpdk
