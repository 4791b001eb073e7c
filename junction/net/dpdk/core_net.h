// core_net.h — one core's slice of the dpdk stack: its queue pair, the receive path
// (eth -> arp | ipv4 -> icmp | udp | tcp), the transmit path, and its ARP table.
//
// Core affinity: a CoreNet is used only on its own runtime core — by that core's poll hook
// (idle context) and by uthreads while they run there (cooperative: never two at once). So
// nothing in it is locked. Three doors let other cores in, all lock-free rte_rings
// (multi-producer, single-consumer): the steering ring (frames of flows this core owns that
// arrived on another core's queue), the ARP ring (ip -> mac learned elsewhere), and the
// retire list of UDP sockets to free here.
//
// Steering (tcp_io.h): a TCP segment is handled on tcp::FlowCore(tuple); a UDP datagram on
// the core its socket was bound on. A frame received on another core is moved there whole.
//
// Hot path: bursts of `burst` frames, no allocation (replies reuse the received mbuf; sends
// take one from the core's pool), no system call, no logging above debug.
#pragma once

#include <rte_ether.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "junction/net/counters.h"
#include "junction/net/dpdk/arp.h"
#include "junction/net/dpdk/dpdk_options.h"
#include "junction/net/dpdk/fault_injector.h"
#include "junction/net/dpdk/port.h"
#include "junction/net/tcp/tcp_io.h"

struct rte_mbuf;
struct rte_ring;
struct rte_mempool;

namespace junction::net::dpdk {

class CoreNet;
struct UdpSock;

// Offsets of a frame the stack builds (no VLAN, no IP options).
inline constexpr std::size_t kEthLen = 14;
inline constexpr std::size_t kIpLen = 20;
inline constexpr std::size_t kL4Offset = kEthLen + kIpLen;
inline constexpr std::size_t kUdpLen = 8;

// What every core of one stack shares; written at start-up, read-only after (except the
// atomics).
struct StackShared {
  Port* port = nullptr;
  rte_ether_addr mac{};
  Ipv4Addr ip;
  std::uint32_t netmask = 0;  // host order
  Ipv4Addr gateway;
  int num_cores = 0;
  std::uint16_t burst = 32;
  std::uint64_t tsc_hz = 0;
  NetCounterSet* counters = nullptr;
  std::vector<CoreNet*> cores;
  // UDP sockets by local port: the owning core (-1: none) and the socket (read only on the
  // owning core). Written under the stack's bind mutex.
  std::unique_ptr<std::atomic<std::int16_t>[]> udp_owner;
  std::unique_ptr<std::atomic<UdpSock*>[]> udp_sock;

  bool OnLink(Ipv4Addr a) const {
    return (a.host_order() & netmask) == (ip.host_order() & netmask);
  }
};

// An ip -> mac pair handed between cores.
struct ArpMessage {
  std::uint32_t ip;
  rte_ether_addr mac;
  std::uint16_t pad;
};
static_assert(sizeof(ArpMessage) == 12);

class CoreNet final : public tcp::TcpTx {
 public:
  // Control path, on its own core. Errors: ring creation.
  static Status<std::unique_ptr<CoreNet>> Create(StackShared* shared, int core,
                                                 const DpdkOptions& options);
  ~CoreNet() override;

  int core() const { return core_; }
  rte_mempool* pool() const { return pool_; }

  // One poll pass: retired sockets, the ARP ring, TCP timers, ARP retries, the steering
  // ring, the RX burst (through the fault injector) last, then the TX flush. Returns the work
  // done: frames handled, plus frames a full TX ring had refused that went out since the last pass
  // (so a caller that backs off while idle keeps retrying while the ring drains).
  // `now_tsc`: a TSC reading of this moment (the scheduler's pass reading, sched::PollPassTsc);
  // Poll() reads its own.
  int Poll();
  int Poll(std::uint64_t now_tsc);
  // Frames wait for a later pass: refused by a full TX ring, or held by a fault injector
  // (delay, reorder). The caller should poll again soon rather than idle.
  bool holding() const { return tx_retry_ > 0 || tx_faults_.holding() || rx_faults_.holding(); }
  // Passes of Poll() that did work, from either caller (the scheduler's poll hook while the
  // core is busy, or the idle ticker). Read on this core only: the ticker compares it with
  // what it saw last time, so traffic the hook handled counts as recent activity too.
  std::uint64_t busy_polls() const { return busy_polls_; }
  // The receive path for one frame (takes ownership). `steered`: it was already handed here
  // by another core (do not steer again).
  void Input(rte_mbuf* m, bool steered);

  // --- transmit, for the sockets and the engine of this core ---
  // A fresh mbuf from this core's pool, or nullptr (counted as kDropNoBuffer by the caller).
  rte_mbuf* AllocFrame();
  // Completes a frame whose L4 header + payload (l4_len bytes) is at kL4Offset: writes the
  // IPv4 header (proto, ttl 64, checksums as the port allows) and Ethernet header, and sends
  // it or queues it for ARP. Takes ownership. Errors: kUnavailable (no route: off-link with
  // no gateway) — the frame is freed.
  Status<void> SendIpv4(rte_mbuf* m, Ipv4Addr dst, std::uint8_t proto, std::size_t l4_len);
  // Sends what is buffered (the end of a poll pass, or of a socket call; also tcp::TcpTx's).
  void Flush() override;

  // --- tcp::TcpTx ---
  std::optional<tcp::TxFrame> Alloc(Ipv4Addr src, Ipv4Addr dst, std::size_t len) override;
  void Send(tcp::TxFrame frame, std::size_t len) override;
  void Discard(tcp::TxFrame frame) override;
  tcp::TxChecksum checksum_mode() const override;
  std::uint16_t mtu() const override;

  void set_tcp_sink(tcp::TcpRxSink* sink) { tcp_ = sink; }

  // --- doors for other cores (any thread) ---
  // Hands a frame of a flow this core owns. False: the ring is full (caller frees, counts).
  bool Steer(rte_mbuf* m);
  void PostArp(const ArpMessage& msg);
  void Retire(UdpSock* s);  // frees it at the start of the next pass on this core

  // The fault injectors (test API: set from a uthread on this core). What is buffered is
  // flushed under the old settings first; frames the old injectors still held are dropped
  // and counted (kDropFault); frames a full ring still refuses are not faulted again.
  void SetFaults(const DpdkFaultOptions& o);
  FaultStats rx_fault_stats() const { return rx_faults_.stats(); }
  FaultStats tx_fault_stats() const { return tx_faults_.stats(); }

  // Stops the hook's work and frees what is held (on this core, from a uthread).
  void Stop();
  bool stopped() const { return stopped_; }

 private:
  CoreNet(StackShared* shared, int core, const DpdkOptions& options);

  void Count(Counter c, std::uint64_t n = 1) { shared_->counters->Add(c, n); }
  // rte_eth_rx_burst / rte_eth_tx_burst on this core's queue; under the burst guard where the
  // port needs it (Port::unmaps_under_bursts). Rx: frames received (0 after a fault). Tx:
  // frames taken, or -1 after a fault (then none of `frames` may be touched again).
  int RxBurst(rte_mbuf** frames, int n);
  int TxBurst(rte_mbuf** frames, int n);
  int GuardedPortBurst(bool rx, rte_mbuf** frames, int n);
  void Drop(rte_mbuf* m, Counter why);
  void InputArp(rte_mbuf* m, std::size_t len);
  void InputIpv4(rte_mbuf* m, std::size_t len, bool steered);
  void InputIcmp(rte_mbuf* m, std::size_t ip_hlen, std::size_t ip_total);
  void InputUdp(rte_mbuf* m, std::size_t ip_hlen, std::size_t ip_total, bool steered);
  void InputTcp(rte_mbuf* m, std::size_t ip_hlen, std::size_t ip_total, bool steered);
  void LearnArp(Ipv4Addr ip, const rte_ether_addr& mac, bool tell_others);
  void SendArpRequest(Ipv4Addr ip);
  void Transmit(rte_mbuf* m);  // a complete frame onto the TX buffer
  void FreeRetired();
  void Housekeeping(std::uint64_t now);

  StackShared* shared_;
  const int core_;
  const std::uint16_t queue_;
  rte_mempool* pool_;
  rte_ring* steer_ring_ = nullptr;
  rte_ring* arp_ring_ = nullptr;
  std::atomic<UdpSock*> retired_{nullptr};
  ArpTable arp_;
  FaultInjector rx_faults_;
  FaultInjector tx_faults_;
  tcp::TcpRxSink* tcp_ = nullptr;
  std::uint64_t next_housekeeping_ = 0;
  std::uint64_t housekeeping_cycles_ = 0;
  std::uint64_t busy_polls_ = 0;
  std::int64_t pass_now_ns_ = 0;  // MonoNs at the start of the running Poll(); 0 outside one
  std::uint64_t last_pass_tsc_ = 0;  // the TSC of the latest Poll(): a coarse clock for ARP hits
  bool stopped_ = false;
  int tx_count_ = 0;
  int tx_retry_ = 0;  // tx_[0, tx_retry_): frames a full ring refused, retried first by Flush
  int tx_retried_ = 0;  // of those, sent since the last Poll returned (work, see Poll)
  static constexpr int kTxBuf = static_cast<int>(kTxBufFrames);  // port.cc sizes pools for it
  rte_mbuf* tx_[kTxBuf];
};

}  // namespace junction::net::dpdk
