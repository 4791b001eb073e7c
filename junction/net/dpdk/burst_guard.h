// burst_guard.h — a PMD burst that survives its queue's memory being unmapped under it.
//
// DPDK 22.11's net_memif, when its peer process goes away, tears the connection down from the
// EAL's interrupt thread: it clears the "connected" flag and then unmaps the shared rings and
// buffers at once, with no lock and no grace period against the cores polling them
// (memif_disconnect). A core that passed the flag check a moment earlier is still reading
// those rings inside rte_eth_rx_burst / rte_eth_tx_burst, and faults. Without this guard the
// whole node dies because a client exited.
//
// GuardedBurst runs one burst with a recovery point: a SIGSEGV or SIGBUS raised inside it, on
// this thread, returns from GuardedBurst with `faulted` set instead of killing the process.
// What the aborted burst held is left alone (the PMD may have freed some of its mbufs
// already: freeing or resending them could double-free), so a fault leaks at most one burst
// of mbufs; the next bursts see the port disconnected and return 0 until a peer connects.
// A fault anywhere else goes to the handler that was installed before (or the default
// action: the usual crash and core dump).
//
// Thread affinity: any thread; the recovery point is per thread. No system call and no
// allocation per burst (a recovery point without the signal mask); only a fault costs one.
#pragma once

#include <cstdint>

namespace junction::net::dpdk {

// Installs the process-wide SIGSEGV/SIGBUS handler (once; later calls do nothing). Call it
// before the first guarded burst, from the control path.
void InstallBurstGuard();

struct GuardedResult {
  int n = 0;             // the burst's return value; 0 when it faulted
  bool faulted = false;  // the burst touched unmapped memory and was abandoned
};

// Runs burst(ctx) under the guard. burst must not switch uthreads, take locks or allocate:
// it may be abandoned at any instruction.
GuardedResult GuardedBurst(int (*burst)(void* ctx), void* ctx);

// Bursts abandoned so far, process-wide.
std::uint64_t BurstFaults();

}  // namespace junction::net::dpdk
