// port.h — one DPDK ethdev brought up in the l2fwd order, with one RX/TX queue pair per core.
//
//   auto port = Port::Open(options, /*num_queues=*/runtime cores);
//   rte_eth_rx_burst((*port)->id(), q, ...);   // queue q belongs to runtime core q only
//
// Bring-up: find the device (options.port by name, else the first), dev_info, mbuf pools (one
// per queue, sized from the descriptor counts, bursts, the steering ring and socket queues),
// configure (RSS over IPv4/TCP/UDP where the device has it; checksum offloads trimmed to what
// it reports; rx interrupts asked for), adjust descriptors, queue setup, start, then rx
// interrupts enabled per queue where the PMD has them (net_tap does, memif does not).
//
// A port is process-wide (the EAL is): Open on an already started port with the same queue
// count returns it as it is; with another count it is stopped and configured again. Pools
// live until the process exits (a queue's descriptors may still point into them after a
// stop). Open and Stop: control path, any thread, not concurrently with each other.
//
// net_memif: when the peer process goes away, the PMD unmaps the shared rings from the EAL's
// interrupt thread with no lock against rx/tx bursts, so a core polling at that moment would
// fault. The stack runs such a port's bursts under a guard (burst_guard.h,
// unmaps_under_bursts()) that turns that fault into an abandoned burst.
#pragma once

#include <rte_ether.h>

#include <cstdint>
#include <string>
#include <vector>

#include "junction/base/error.h"
#include "junction/net/dpdk/dpdk_options.h"

struct rte_mempool;

namespace junction::net::dpdk {

class Port {
 public:
  // Errors: kNotFound (no such port; the message lists the ports there are), kUnavailable
  // (a DPDK call failed: the message names it and its error).
  static Status<Port*> Open(const DpdkOptions& options, int num_queues);

  std::uint16_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const rte_ether_addr& mac() const { return mac_; }
  int num_queues() const { return num_queues_; }
  std::uint16_t rx_descriptors() const { return nb_rxd_; }
  std::uint16_t tx_descriptors() const { return nb_txd_; }
  rte_mempool* pool(int q) const { return pools_[q]; }
  std::uint16_t mtu() const { return mtu_; }

  bool rss() const { return rss_; }
  // The queue's rx-interrupt fd (readable while frames wait), or -1: poll it.
  int rx_intr_fd(int q) const { return intr_fds_[q]; }
  bool tx_ip_cksum() const { return tx_ip_cksum_; }
  bool tx_l4_cksum() const { return tx_l4_cksum_; }  // both UDP and TCP
  bool rx_cksum() const { return rx_cksum_; }
  // The PMD may unmap a queue's memory while a burst reads it (net_memif, see above): run
  // bursts through GuardedBurst.
  bool unmaps_under_bursts() const { return unmaps_under_bursts_; }

 private:
  Status<void> Configure(const DpdkOptions& options, int num_queues);

  std::uint16_t id_ = 0;
  std::string name_;
  rte_ether_addr mac_{};
  int num_queues_ = 0;
  std::uint16_t nb_rxd_ = 0, nb_txd_ = 0;
  std::uint16_t mtu_ = 1500;
  std::vector<rte_mempool*> pools_;
  std::vector<int> intr_fds_;
  bool rss_ = false;
  bool tx_ip_cksum_ = false, tx_l4_cksum_ = false, rx_cksum_ = false;
  bool started_ = false;
  bool unmaps_under_bursts_ = false;
};

// Mbufs in one queue's pool: both rings, bursts in flight, the steering ring, socket queues,
// the mempool cache, and what a core holds between passes — its TX buffer (frames a full TX
// ring refused wait there), both fault injectors' held frames and the ARP queue — rounded up
// to 2^k - 1. A pool short of these runs dry exactly when the peer is slow or faults are on.
std::uint32_t PoolSize(std::uint16_t rxd, std::uint16_t txd, std::uint16_t burst);

// Sizes of the per-core rings the stack keeps (port.cc sizes pools for them).
inline constexpr unsigned kTxBufFrames = 128;  // a core's TX buffer (core_net.h)
inline constexpr unsigned kSteerRingSize = 1024;
inline constexpr unsigned kSocketRingSize = 256;
inline constexpr unsigned kSocketQueueBudget = 2048;  // mbufs all sockets of a core may hold
inline constexpr unsigned kPoolCache = 256;

}  // namespace junction::net::dpdk
