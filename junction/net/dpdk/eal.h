// eal.h — DPDK's Environment Abstraction Layer, started once per process from config args.
//
//   auto eal = dpdk::StartEal(options);   // idempotent: later calls return the first result
//
// The EAL can be initialised once per process and never again after cleanup, so this is a
// process-wide singleton: the first call runs rte_eal_init on a short-lived helper thread (so
// the EAL's main-lcore pinning never lands on a runtime worker's kthread), later calls return
// what the first one did. Arguments: options.eal_args, plus a unique --file-prefix
// (faasnode-<pid>-<n>) unless given, plus --no-huge -m 256 when hugepages are off or absent
// (options.hugepages, see dpdk_options.h). Blocks its caller for the EAL's start-up
// (~150 ms here); call it at start-up only. Any thread.
#pragma once

#include <string>
#include <vector>

#include "junction/base/error.h"
#include "junction/net/dpdk/dpdk_options.h"

namespace junction::net::dpdk {

struct EalInfo {
  std::vector<std::string> args;  // what rte_eal_init was given (argv[1..])
  bool hugepages = false;         // backed by hugepages (false: --no-huge)
};

// Errors: kUnavailable (hugepages "on" but none free; rte_eal_init failed: the message has
// rte_strerror and the arguments), kInvalidArgument (hugepages not auto/on/off).
Status<EalInfo> StartEal(const DpdkOptions& options);

// Registers the calling kthread with the EAL (an lcore id, so mempool caches work for it).
// Idempotent per thread. Errors: the EAL is not started, or no lcore id is free.
Status<void> RegisterThisThread();

// Free hugepage bytes according to /proc/meminfo, and whether hugetlbfs is mounted.
std::uint64_t FreeHugepageBytes();
bool HugetlbfsMounted();

}  // namespace junction::net::dpdk
