// memif_prefault.h — maps in, ahead of the data path, the pages of the shared-memory regions a
// net_memif port exchanges frames through.
//
// Why: DPDK's memif PMD mmaps each region (a memfd holding the rings and ~4 MiB of packet
// buffers per queue pair) without populating it, so the first frames through every buffer
// page each take a page fault on the core that polls the port: about a thousand faults after
// every (re)connection of the peer, and a fault costs 1-12 µs (11.5 µs measured in this
// project's 2-vCPU VM). A burst of 100 requests right after a peer connected waited 8-10 ms
// for them (docs/benchmarks/load.md). The client side creates its regions inside
// rte_eth_dev_start; the server side maps the peer's when the peer connects, on the EAL's
// interrupt thread, with no event the application can subscribe to (memif raises no LSC).
//
// PrefaultMemifRegions: any thread, blocking (one madvise per region); never on a core.
// MemifLinkWatcher: a control thread that looks at the link every `period` and populates the
// regions after each transition to up; it never touches the rings' contents.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "junction/base/error.h"

namespace junction::net::dpdk {

// One mapping of a memif region in this process: [lo, hi).
struct MappedRange {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};

// The read-write mappings of this process whose name marks a memif region
// (/proc/self/maps: "/memfd:memif_region_N"). Errors: /proc/self/maps unreadable.
Status<std::vector<MappedRange>> MemifRegionMappings();

// Populates, writable, every mapping MemifRegionMappings finds. Returns the bytes covered (0: none mapped yet).
// MADV_POPULATE_WRITE (Linux 5.14+); on older kernels each page is read once instead (a
// shared memfd page mapped by a read fault is writable). Errors: MemifRegionMappings', or
// madvise failing otherwise than with EINVAL (kUnavailable, naming the call).
Status<std::size_t> PrefaultMemifRegions();

class MemifLinkWatcher {
 public:
  // Starts the thread. port: a started net_memif port.
  MemifLinkWatcher(std::uint16_t port, std::chrono::milliseconds period);
  ~MemifLinkWatcher();  // stops and joins the thread
  MemifLinkWatcher(const MemifLinkWatcher&) = delete;
  MemifLinkWatcher& operator=(const MemifLinkWatcher&) = delete;

  // Transitions to up handled so far (each populated the regions). Any thread.
  std::uint64_t ups() const;

 private:
  void Run();

  std::uint16_t port_;
  std::chrono::milliseconds period_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::uint64_t ups_ = 0;
  std::thread thread_;
};

}  // namespace junction::net::dpdk
