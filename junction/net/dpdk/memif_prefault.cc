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

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 uapi; older libc headers lack the name
#endif

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
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t total = 0;
  for (const MappedRange& r : *ranges) {
    void* addr = reinterpret_cast<void*>(r.lo);
    const std::size_t len = r.hi - r.lo;
    if (madvise(addr, len, MADV_POPULATE_WRITE) != 0) {
      if (errno != EINVAL) {
        return MakeError(ErrorCode::kUnavailable,
                         fmt::format("memif prefault: madvise(MADV_POPULATE_WRITE) on {:#x}-{:#x}: {}",
                                     r.lo, r.hi, std::strerror(errno)));
      }
      // A kernel before 5.14: one read per page maps it (shared memfd pages map writable).
      const volatile char* p = static_cast<const volatile char*>(addr);
      for (std::size_t off = 0; off < len; off += page) (void)p[off];
    }
    total += len;
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
