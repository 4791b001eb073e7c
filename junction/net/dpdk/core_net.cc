// core_net.cc — one core's receive and transmit paths (see core_net.h).
#include "junction/net/dpdk/core_net.h"

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstring>

#include "junction/net/dpdk/burst_guard.h"
#include "junction/net/dpdk/udp.h"

namespace junction::net::dpdk {
namespace {

std::atomic<int> ring_generation{0};

constexpr std::uint16_t kFragMask = RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK;

Ipv4Addr FromBe(rte_be32_t a) { return Ipv4Addr(rte_be_to_cpu_32(a)); }

// RFC 768: the sum over the pseudo-header (addresses, protocol, UDP length) and the ulen
// bytes of header and data folds to 0xffff.
bool UdpChecksumOk(const rte_ipv4_hdr* ip, const rte_udp_hdr* udp, std::size_t ulen) {
  std::uint32_t sum = rte_raw_cksum(&ip->src_addr, 8);  // src and dst, adjacent
  sum += rte_cpu_to_be_16(IPPROTO_UDP) + rte_cpu_to_be_16(static_cast<std::uint16_t>(ulen));
  sum += rte_raw_cksum(udp, ulen);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

}  // namespace

CoreNet::CoreNet(StackShared* shared, int core, const DpdkOptions& options)
    : shared_(shared),
      core_(core),
      queue_(static_cast<std::uint16_t>(core)),
      pool_(shared->port->pool(core)),
      arp_(shared->tsc_hz / 1000 * options.arp_timeout_ms,
           shared->tsc_hz / 1000 * options.arp_retry_ms, options.arp_retries) {
  housekeeping_cycles_ = shared->tsc_hz / 1000;  // 1 ms
  SetFaults(options.faults);
}

Status<std::unique_ptr<CoreNet>> CoreNet::Create(StackShared* shared, int core,
                                                 const DpdkOptions& options) {
  std::unique_ptr<CoreNet> c(new CoreNet(shared, core, options));
  const int gen = ring_generation++;
  const std::string steer = fmt::format("fn_steer{}_{}", gen, core);
  const std::string arp = fmt::format("fn_arp{}_{}", gen, core);
  c->steer_ring_ = rte_ring_create(steer.c_str(), kSteerRingSize, SOCKET_ID_ANY, RING_F_SC_DEQ);
  c->arp_ring_ =
      rte_ring_create_elem(arp.c_str(), sizeof(ArpMessage), 256, SOCKET_ID_ANY, RING_F_SC_DEQ);
  if (c->steer_ring_ == nullptr || c->arp_ring_ == nullptr) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("dpdk: creating core {}'s rings failed: {}", core,
                                 rte_strerror(rte_errno)));
  }
  return c;
}

CoreNet::~CoreNet() {
  if (steer_ring_ != nullptr) {
    rte_mbuf* m;
    while (rte_ring_sc_dequeue(steer_ring_, reinterpret_cast<void**>(&m)) == 0) {
      rte_pktmbuf_free(m);
    }
    rte_ring_free(steer_ring_);
  }
  if (arp_ring_ != nullptr) rte_ring_free(arp_ring_);
  for (int i = 0; i < tx_count_; ++i) rte_pktmbuf_free(tx_[i]);
  FreeRetired();
}

void CoreNet::SetFaults(const DpdkFaultOptions& o) {
  Flush();  // what is buffered leaves under the settings it was made under
  // Frames the old injectors hold were already faulted (delayed, reordered): drop them rather
  // than re-time them under new settings, and count them with the injected drops.
  const int held = rx_faults_.FreeHeld() + tx_faults_.FreeHeld();
  if (held > 0) Count(Counter::kDropFault, static_cast<std::uint64_t>(held));
  // Whatever Flush could not send went through the old settings: the new injector must not
  // see it again (Flush passes tx_[0, tx_retry_) straight on).
  tx_retry_ = tx_count_;
  rx_faults_.~FaultInjector();
  new (&rx_faults_) FaultInjector(o.rx ? o : DpdkFaultOptions{}, core_ * 2, shared_->tsc_hz);
  tx_faults_.~FaultInjector();
  new (&tx_faults_) FaultInjector(o.tx ? o : DpdkFaultOptions{}, core_ * 2 + 1, shared_->tsc_hz);
}

void CoreNet::Stop() {
  stopped_ = true;
  Flush();
  rx_faults_.FreeHeld();
  tx_faults_.FreeHeld();
  FreeRetired();
}

// --- doors ----------------------------------------------------------------------------------

bool CoreNet::Steer(rte_mbuf* m) { return rte_ring_mp_enqueue(steer_ring_, m) == 0; }

void CoreNet::PostArp(const ArpMessage& msg) {
  ArpMessage copy = msg;
  rte_ring_mp_enqueue_elem(arp_ring_, &copy, sizeof(copy));  // full: the core asks itself later
}

void CoreNet::Retire(UdpSock* s) {
  UdpSock* head = retired_.load(std::memory_order_relaxed);
  do {
    s->retired_next.store(head, std::memory_order_relaxed);
  } while (!retired_.compare_exchange_weak(head, s, std::memory_order_release,
                                           std::memory_order_relaxed));
}

void CoreNet::FreeRetired() {
  // Looked at on every poll pass: a plain load first, since the exchange is a locked
  // instruction (38% of Poll's own samples, where this is inlined, in an RPC bench profile)
  // and the list is almost always empty.
  if (retired_.load(std::memory_order_relaxed) == nullptr) return;
  UdpSock* s = retired_.exchange(nullptr, std::memory_order_acquire);
  while (s != nullptr) {
    UdpSock* next = s->retired_next.load(std::memory_order_relaxed);
    FreeUdpSock(s);
    s = next;
  }
}

// --- bursts -------------------------------------------------------------------------------

namespace {
struct BurstArgs {
  std::uint16_t port;
  std::uint16_t queue;
  rte_mbuf** frames;
  std::uint16_t n;
};
int RxBurstOf(void* p) {
  auto* a = static_cast<BurstArgs*>(p);
  return rte_eth_rx_burst(a->port, a->queue, a->frames, a->n);
}
int TxBurstOf(void* p) {
  auto* a = static_cast<BurstArgs*>(p);
  return rte_eth_tx_burst(a->port, a->queue, a->frames, a->n);
}
}  // namespace

int CoreNet::GuardedPortBurst(bool rx, rte_mbuf** frames, int n) {
  BurstArgs a{shared_->port->id(), queue_, frames, static_cast<std::uint16_t>(n)};
  const GuardedResult r = GuardedBurst(rx ? &RxBurstOf : &TxBurstOf, &a);
  if (!r.faulted) return r.n;
  spdlog::warn("dpdk: port {} queue {}: its memory was unmapped during a {} burst (the memif "
               "peer went away; DPDK 22.11 does not wait for pollers); burst abandoned, at "
               "most {} mbufs lost; waiting for a peer to connect again",
               shared_->port->name(), queue_, rx ? "receive" : "transmit", n);
  return -1;
}

inline int CoreNet::RxBurst(rte_mbuf** frames, int n) {
  if (!shared_->port->unmaps_under_bursts()) [[likely]] {
    return rte_eth_rx_burst(shared_->port->id(), queue_, frames, static_cast<std::uint16_t>(n));
  }
  const int k = GuardedPortBurst(true, frames, n);
  return k < 0 ? 0 : k;
}

inline int CoreNet::TxBurst(rte_mbuf** frames, int n) {
  if (!shared_->port->unmaps_under_bursts()) [[likely]] {
    return rte_eth_tx_burst(shared_->port->id(), queue_, frames, static_cast<std::uint16_t>(n));
  }
  return GuardedPortBurst(false, frames, n);
}

// --- the poll pass --------------------------------------------------------------------------

int CoreNet::Poll() { return Poll(rte_rdtsc()); }

int CoreNet::Poll(std::uint64_t now) {
  if (stopped_) return 0;
  FreeRetired();
  constexpr int kMaxBurst = 64;
  rte_mbuf* rx[kMaxBurst];
  rte_mbuf* out[kMaxBurst * 2 + FaultInjector::kMaxHeld];
  const std::uint16_t burst = shared_->burst < kMaxBurst ? shared_->burst : kMaxBurst;
  int handled = 0;
  // One clock reading for the whole pass (`now`; rdtsc costs ~20 ns here): the fault
  // injector's times, the TCP segments' receive time, the TCP timers and the housekeeping
  // all use it.
  last_pass_tsc_ = now;
  pass_now_ns_ = sched::MonoNsAt(now);

  // The receive burst comes last: a uthread it wakes runs as soon as the pass ends, so the
  // other cores' doors, the timers and the housekeeping go first, off a request's path.
  ArpMessage msgs[16];
  const unsigned a = rte_ring_sc_dequeue_burst_elem(arp_ring_, msgs, sizeof(ArpMessage), 16,
                                                    nullptr);
  for (unsigned i = 0; i < a; ++i) LearnArp(Ipv4Addr(msgs[i].ip), msgs[i].mac, false);

  if (tcp_ != nullptr) tcp_->Advance(pass_now_ns_);
  if (now >= next_housekeeping_) Housekeeping(now);

  // Frames of flows this core owns that arrived elsewhere.
  rte_mbuf* steered[kMaxBurst];
  const unsigned s =
      rte_ring_sc_dequeue_burst(steer_ring_, reinterpret_cast<void**>(steered), burst, nullptr);
  for (unsigned i = 0; i < s; ++i) Input(steered[i], true);
  handled += static_cast<int>(s);

  int n = RxBurst(rx, burst);
  rte_mbuf** frames = rx;
  if (rx_faults_.enabled()) {
    const std::uint64_t dropped = rx_faults_.stats().dropped;
    int k = rx_faults_.Apply(rx, n, out, std::size(out), now, pool_);
    k += rx_faults_.Release(now, out + k, std::size(out) - k);
    if (rx_faults_.stats().dropped != dropped) {
      Count(Counter::kDropFault, rx_faults_.stats().dropped - dropped);
    }
    frames = out;
    n = k;
  }
  if (n > 0) {
    std::uint64_t bytes = 0;
    for (int i = 0; i < n; ++i) bytes += rte_pktmbuf_pkt_len(frames[i]);
    Count(Counter::kRxPackets, n);
    Count(Counter::kRxBytes, bytes);
    for (int i = 0; i < n; ++i) Input(frames[i], false);
    handled += n;
  }
  pass_now_ns_ = 0;
  Flush();
  // Refused frames that got out (here or in a socket call's flush since the last pass) are
  // progress: a poller backing off on idle keeps its pace while the peer drains the ring.
  handled += std::exchange(tx_retried_, 0);
  if (handled > 0) ++busy_polls_;
  return handled;
}

void CoreNet::Housekeeping(std::uint64_t now) {
  next_housekeeping_ = now + housekeeping_cycles_;
  arp_.Tick(
      now, [&](Ipv4Addr ip) { SendArpRequest(ip); },
      [&](rte_mbuf* m) { Drop(m, Counter::kDropArpUnresolved); });
}

void CoreNet::Drop(rte_mbuf* m, Counter why) {
  rte_pktmbuf_free(m);
  Count(why);
}

// --- receive --------------------------------------------------------------------------------

void CoreNet::Input(rte_mbuf* m, bool steered) {
  if (m->nb_segs != 1) return Drop(m, Counter::kDropMalformed);  // MTU-sized rx buffers only
  const std::size_t len = rte_pktmbuf_data_len(m);
  if (len < kEthLen) return Drop(m, Counter::kDropMalformed);
  const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
  if (!rte_is_same_ether_addr(&eth->dst_addr, &shared_->mac) &&
      !rte_is_broadcast_ether_addr(&eth->dst_addr)) {
    return Drop(m, Counter::kDropNotForUs);
  }
  switch (rte_be_to_cpu_16(eth->ether_type)) {
    case RTE_ETHER_TYPE_ARP:
      return InputArp(m, len);
    case RTE_ETHER_TYPE_IPV4:
      return InputIpv4(m, len, steered);
    default:
      return Drop(m, Counter::kDropUnknownProto);
  }
}

// RFC 826: merge the sender if known (or if the frame is for us), answer requests for us.
void CoreNet::InputArp(rte_mbuf* m, std::size_t len) {
  if (len < kEthLen + sizeof(rte_arp_hdr)) return Drop(m, Counter::kDropMalformed);
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  auto* arp = rte_pktmbuf_mtod_offset(m, rte_arp_hdr*, kEthLen);
  if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
      arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
      arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4) {
    return Drop(m, Counter::kDropMalformed);
  }
  const std::uint16_t op = rte_be_to_cpu_16(arp->arp_opcode);
  if (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY) return Drop(m, Counter::kDropMalformed);
  const Ipv4Addr sender = FromBe(arp->arp_data.arp_sip);
  const Ipv4Addr target = FromBe(arp->arp_data.arp_tip);
  const bool for_us = target == shared_->ip;
  if (!sender.is_any() && rte_is_unicast_ether_addr(&arp->arp_data.arp_sha) &&
      (for_us || arp_.Known(sender))) {
    LearnArp(sender, arp->arp_data.arp_sha, true);
  }
  if (!for_us) return Drop(m, Counter::kDropNotForUs);
  Count(Counter::kArpIn);
  if (op != RTE_ARP_OP_REQUEST) {
    rte_pktmbuf_free(m);
    return;
  }
  // Answer in place.
  arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
  arp->arp_data.arp_tha = arp->arp_data.arp_sha;
  arp->arp_data.arp_tip = arp->arp_data.arp_sip;
  arp->arp_data.arp_sha = shared_->mac;
  arp->arp_data.arp_sip = rte_cpu_to_be_32(shared_->ip.host_order());
  eth->dst_addr = arp->arp_data.arp_tha;
  eth->src_addr = shared_->mac;
  rte_pktmbuf_trim(m, static_cast<std::uint16_t>(len - kEthLen - sizeof(rte_arp_hdr)));
  m->ol_flags = 0;
  Transmit(m);
}

void CoreNet::LearnArp(Ipv4Addr ip, const rte_ether_addr& mac, bool tell_others) {
  const std::uint64_t now = rte_rdtsc();
  arp_.Learn(ip, mac, now);
  while (rte_mbuf* q = arp_.TakeQueued(ip)) {
    auto* eth = rte_pktmbuf_mtod(q, rte_ether_hdr*);
    eth->dst_addr = mac;
    Transmit(q);
  }
  if (!tell_others) return;
  const ArpMessage msg{ip.host_order(), mac, 0};
  for (CoreNet* c : shared_->cores) {
    if (c != this && c != nullptr) c->PostArp(msg);
  }
}

void CoreNet::SendArpRequest(Ipv4Addr ip) {
  rte_mbuf* m = AllocFrame();
  if (m == nullptr) return Count(Counter::kDropNoBuffer);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(
      rte_pktmbuf_append(m, kEthLen + sizeof(rte_arp_hdr)));
  memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
  eth->src_addr = shared_->mac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
  auto* arp = reinterpret_cast<rte_arp_hdr*>(eth + 1);
  arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
  arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  arp->arp_hlen = RTE_ETHER_ADDR_LEN;
  arp->arp_plen = 4;
  arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
  arp->arp_data.arp_sha = shared_->mac;
  arp->arp_data.arp_sip = rte_cpu_to_be_32(shared_->ip.host_order());
  memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
  arp->arp_data.arp_tip = rte_cpu_to_be_32(ip.host_order());
  Transmit(m);
}

// RFC 791 / RFC 1122 3.2.1: version, header length, total length, checksum; fragments are
// dropped and counted (no reassembly); only our address (or broadcast) is accepted; TTL is
// not checked (see below).
void CoreNet::InputIpv4(rte_mbuf* m, std::size_t len, bool steered) {
  if (len < kEthLen + sizeof(rte_ipv4_hdr)) return Drop(m, Counter::kDropMalformed);
  const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, kEthLen);
  const std::size_t hlen = static_cast<std::size_t>(ip->version_ihl & 0x0f) * 4;
  if ((ip->version_ihl >> 4) != 4 || hlen < sizeof(rte_ipv4_hdr) || len - kEthLen < hlen) {
    return Drop(m, Counter::kDropMalformed);
  }
  const std::size_t total = rte_be_to_cpu_16(ip->total_length);
  if (total < hlen || total > len - kEthLen) return Drop(m, Counter::kDropMalformed);
  const std::uint64_t ipck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
  if (ipck == RTE_MBUF_F_RX_IP_CKSUM_BAD) return Drop(m, Counter::kDropBadChecksum);
  if (ipck != RTE_MBUF_F_RX_IP_CKSUM_GOOD && rte_raw_cksum(ip, hlen) != 0xffff) {
    return Drop(m, Counter::kDropBadChecksum);
  }
  if (rte_be_to_cpu_16(ip->fragment_offset) & kFragMask) return Drop(m, Counter::kDropFragment);
  const Ipv4Addr dst = FromBe(ip->dst_addr);
  if (dst != shared_->ip && dst != Ipv4Addr(0xffffffffu)) return Drop(m, Counter::kDropNotForUs);
  // No TTL check: a host does not decrement TTL and "MUST NOT discard a datagram just because
  // it was received with TTL less than 2" (RFC 1122 3.2.1.7); TTL 0 is a router's matter
  // (RFC 1812 5.3.1). Linux delivers such datagrams locally too.
  if (total < len - kEthLen) {  // Ethernet padding after the datagram
    rte_pktmbuf_trim(m, static_cast<std::uint16_t>(len - kEthLen - total));
  }
  switch (ip->next_proto_id) {
    case IPPROTO_ICMP:
      return InputIcmp(m, hlen, total);
    case IPPROTO_UDP:
      return InputUdp(m, hlen, total, steered);
    case IPPROTO_TCP:
      return InputTcp(m, hlen, total, steered);
    default:
      return Drop(m, Counter::kDropUnknownProto);
  }
}

// RFC 792: echo requests to our unicast address are answered in place; other types counted.
void CoreNet::InputIcmp(rte_mbuf* m, std::size_t hlen, std::size_t total) {
  auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, kEthLen);
  const std::size_t icmp_len = total - hlen;
  if (icmp_len < sizeof(rte_icmp_hdr)) return Drop(m, Counter::kDropMalformed);
  auto* icmp = rte_pktmbuf_mtod_offset(m, rte_icmp_hdr*, kEthLen + hlen);
  if (rte_raw_cksum(icmp, icmp_len) != 0xffff) return Drop(m, Counter::kDropBadChecksum);
  if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0 ||
      FromBe(ip->dst_addr) != shared_->ip) {
    return Drop(m, Counter::kDropUnknownProto);
  }
  icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
  icmp->icmp_cksum = 0;
  icmp->icmp_cksum = static_cast<std::uint16_t>(~rte_raw_cksum(icmp, icmp_len));
  const rte_be32_t from = ip->src_addr;
  ip->src_addr = ip->dst_addr;
  ip->dst_addr = from;
  ip->time_to_live = 64;
  ip->hdr_checksum = 0;
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  eth->dst_addr = eth->src_addr;
  eth->src_addr = shared_->mac;
  m->ol_flags = 0;
  Count(Counter::kIcmpEchoReplies);
  Transmit(m);
}

// RFC 768: length within the IP payload, checksum when not zero; delivered on the core that
// owns the socket.
void CoreNet::InputUdp(rte_mbuf* m, std::size_t hlen, std::size_t total, bool steered) {
  const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, kEthLen);
  if (total - hlen < sizeof(rte_udp_hdr)) return Drop(m, Counter::kDropMalformed);
  const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, kEthLen + hlen);
  const std::size_t ulen = rte_be_to_cpu_16(udp->dgram_len);
  if (ulen < sizeof(rte_udp_hdr) || ulen > total - hlen) return Drop(m, Counter::kDropMalformed);
  const std::uint16_t port = rte_be_to_cpu_16(udp->dst_port);
  const int owner = shared_->udp_owner[port].load(std::memory_order_acquire);
  if (owner < 0) return Drop(m, Counter::kDropNoSocket);
  if (owner != core_ && !steered) {
    if (!shared_->cores[owner]->Steer(m)) Drop(m, Counter::kDropNoBuffer);
    return;
  }
  if (udp->dgram_cksum != 0) {
    const std::uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
    if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD) return Drop(m, Counter::kDropBadChecksum);
    if (l4 != RTE_MBUF_F_RX_L4_CKSUM_GOOD && !UdpChecksumOk(ip, udp, ulen)) {
      return Drop(m, Counter::kDropBadChecksum);
    }
  }
  UdpSock* s = shared_->udp_sock[port].load(std::memory_order_acquire);
  if (s == nullptr || s->owner != core_) return Drop(m, Counter::kDropNoSocket);
  m->l2_len = kEthLen;
  m->l3_len = hlen;
  if (rte_ring_sp_enqueue(s->rx, m) != 0) return Drop(m, Counter::kDropNoBuffer);
  s->rd.Notify();
}

void CoreNet::InputTcp(rte_mbuf* m, std::size_t hlen, std::size_t total, bool steered) {
  const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, kEthLen);
  const std::size_t tlen = total - hlen;
  if (tlen < sizeof(rte_tcp_hdr)) return Drop(m, Counter::kDropMalformed);
  const auto* th = rte_pktmbuf_mtod_offset(m, const rte_tcp_hdr*, kEthLen + hlen);
  const tcp::FourTuple t{FromBe(ip->dst_addr), rte_be_to_cpu_16(th->dst_port),
                         FromBe(ip->src_addr), rte_be_to_cpu_16(th->src_port)};
  const int owner = tcp::FlowCore(t, shared_->num_cores);
  if (owner != core_ && !steered) {
    if (!shared_->cores[owner]->Steer(m)) Drop(m, Counter::kDropNoBuffer);
    return;
  }
  if (tcp_ == nullptr) return Drop(m, Counter::kDropNoSocket);  // no TCP engine wired
  const std::uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
  if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD) return Drop(m, Counter::kDropBadChecksum);
  tcp::RxSegment seg;
  seg.src = t.remote_addr;
  seg.dst = t.local_addr;
  seg.tcp = std::span(rte_pktmbuf_mtod_offset(m, const std::byte*, kEthLen + hlen), tlen);
  seg.checksum_verified = l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD;
  seg.now_ns = pass_now_ns_;
  tcp_->Input(seg);
  rte_pktmbuf_free(m);
}

// --- transmit -------------------------------------------------------------------------------

rte_mbuf* CoreNet::AllocFrame() { return rte_pktmbuf_alloc(pool_); }

Status<void> CoreNet::SendIpv4(rte_mbuf* m, Ipv4Addr dst, std::uint8_t proto,
                               std::size_t l4_len) {
  const std::size_t frame = kL4Offset + l4_len;
  if (rte_pktmbuf_data_len(m) < frame) {
    rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame - rte_pktmbuf_data_len(m)));
  } else if (rte_pktmbuf_data_len(m) > frame) {
    rte_pktmbuf_trim(m, static_cast<std::uint16_t>(rte_pktmbuf_data_len(m) - frame));
  }
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->type_of_service = 0;
  ip->total_length = rte_cpu_to_be_16(static_cast<std::uint16_t>(kIpLen + l4_len));
  ip->packet_id = 0;
  ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
  ip->time_to_live = 64;
  ip->next_proto_id = proto;
  ip->hdr_checksum = 0;
  ip->src_addr = rte_cpu_to_be_32(shared_->ip.host_order());
  ip->dst_addr = rte_cpu_to_be_32(dst.host_order());
  m->l2_len = kEthLen;
  m->l3_len = kIpLen;
  const bool l4_offload = shared_->port->tx_l4_cksum() && shared_->port->tx_ip_cksum();
  if (proto == IPPROTO_UDP) {
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->dgram_cksum = 0;
    if (l4_offload) {
      m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
      udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
    } else {
      udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
    }
  } else if (proto == IPPROTO_TCP && l4_offload) {
    m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM;
  }
  if (shared_->port->tx_ip_cksum()) {
    m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
  } else {
    ip->hdr_checksum = rte_ipv4_cksum(ip);
  }
  eth->src_addr = shared_->mac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  if (dst == Ipv4Addr(0xffffffffu)) {
    memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
    Transmit(m);
    return {};
  }
  Ipv4Addr hop = dst;
  if (!shared_->OnLink(dst)) {
    if (shared_->gateway.is_any()) {
      rte_pktmbuf_free(m);
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("{} is not on this node's subnet and net.dpdk has no gateway: "
                                   "set net.dpdk.gateway",
                                   dst.ToString()));
    }
    hop = shared_->gateway;
  }
  // A hit is checked against the last poll pass's TSC, not a fresh read (~20 ns on every
  // segment sent): a clock behind only keeps an entry a little past its expiry.
  if (const rte_ether_addr* mac = arp_.Lookup(hop, last_pass_tsc_)) {
    eth->dst_addr = *mac;
    Transmit(m);
    return {};
  }
  const std::uint64_t now = rte_rdtsc();
  switch (arp_.Queue(m, hop, now)) {
    case ArpTable::QueueResult::kQueuedSendRequest:
      SendArpRequest(hop);
      break;
    case ArpTable::QueueResult::kQueued:
      break;
    case ArpTable::QueueResult::kFull:
      Drop(m, Counter::kDropNoBuffer);
      break;
  }
  return {};
}

void CoreNet::Transmit(rte_mbuf* m) {
  if (tx_count_ == kTxBuf) Flush();
  if (tx_count_ == kTxBuf) return Drop(m, Counter::kDropNoBuffer);
  tx_[tx_count_++] = m;
  if (tx_count_ >= shared_->burst) Flush();
}

void CoreNet::Flush() {
  rte_mbuf* out[kTxBuf + FaultInjector::kMaxHeld];
  rte_mbuf** frames = tx_;
  int n = tx_count_;
  const int retry = tx_retry_;  // frames[0, retry) are the refused ones, in both paths
  if (tx_faults_.enabled()) {
    // tx_[0, tx_retry_) came back from a full ring and went through the injector already.
    const int r = tx_retry_;
    std::copy(tx_, tx_ + r, out);
    const std::uint64_t now = rte_rdtsc();
    const std::uint64_t dropped = tx_faults_.stats().dropped;
    int k = r + tx_faults_.Apply(tx_ + r, n - r, out + r, std::size(out) - r, now, pool_);
    k += tx_faults_.Release(now, out + k, std::size(out) - k);
    if (tx_faults_.stats().dropped != dropped) {
      Count(Counter::kDropFault, tx_faults_.stats().dropped - dropped);
    }
    frames = out;
    n = k;
  }
  tx_count_ = 0;
  tx_retry_ = 0;
  if (n == 0) return;
  int sent = 0;
  for (int tries = 0; sent < n && tries < 4; ++tries) {
    const int k = TxBurst(frames + sent, n - sent);
    if (k < 0) {
      // The port's memory went away under the burst (burst_guard.h): the frames may be
      // half-freed by the PMD, so they are left alone, not retried.
      Count(Counter::kDropNoBuffer, n - sent);
      tx_retried_ += std::min(sent, retry);
      return;
    }
    sent += k;
  }
  tx_retried_ += std::min(sent, retry);
  if (sent > 0) {
    std::uint64_t bytes = 0;
    for (int i = 0; i < sent; ++i) bytes += rte_pktmbuf_pkt_len(frames[i]);
    Count(Counter::kTxPackets, sent);
    Count(Counter::kTxBytes, bytes);
  }
  if (sent < n) {
    // The ring is full (the peer has not drained it yet): keep what fits for the next flush
    // instead of dropping it, so many flows bursting at once back up here rather than turn
    // into TCP losses and retransmit timeouts. Moving down within tx_ is safe (i < sent + i).
    const int keep = std::min(n - sent, kTxBuf);
    for (int i = 0; i < keep; ++i) tx_[i] = frames[sent + i];
    tx_count_ = tx_retry_ = keep;
    if (sent + keep < n) {
      for (int i = sent + keep; i < n; ++i) rte_pktmbuf_free(frames[i]);
      Count(Counter::kDropNoBuffer, n - sent - keep);
    }
  }
}

// --- tcp::TcpTx -----------------------------------------------------------------------------

std::optional<tcp::TxFrame> CoreNet::Alloc(Ipv4Addr src, Ipv4Addr dst, std::size_t len) {
  if (len + kIpLen > mtu()) return std::nullopt;
  // A full TX buffer (the peer's ring has not drained) refuses the segment here, before the
  // engine counts it as sent: Transmit would have to drop it, and a segment lost that way
  // costs its flow a retransmission timeout. The engine retries a refused flow on the next
  // pass (Engine::Advance), so many flows bursting at once wait instead of collapsing.
  if (tx_count_ == kTxBuf) {
    Flush();
    if (tx_count_ == kTxBuf) return std::nullopt;
  }
  rte_mbuf* m = AllocFrame();
  if (m == nullptr) return std::nullopt;
  char* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(kL4Offset + len));
  if (p == nullptr) {
    rte_pktmbuf_free(m);
    return std::nullopt;
  }
  // The destination rides in the IPv4 header slot until Send fills the rest.
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p + kEthLen);
  ip->dst_addr = rte_cpu_to_be_32(dst.host_order());
  return tcp::TxFrame{std::span(reinterpret_cast<std::byte*>(p + kL4Offset), len), m};
}

void CoreNet::Send(tcp::TxFrame frame, std::size_t len) {
  auto* m = static_cast<rte_mbuf*>(frame.handle);
  const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, kEthLen);
  const Ipv4Addr dst = FromBe(ip->dst_addr);
  (void)SendIpv4(m, dst, IPPROTO_TCP, len);  // no route: freed (the engine's timers give up)
}

void CoreNet::Discard(tcp::TxFrame frame) { rte_pktmbuf_free(static_cast<rte_mbuf*>(frame.handle)); }

tcp::TxChecksum CoreNet::checksum_mode() const {
  return shared_->port->tx_l4_cksum() && shared_->port->tx_ip_cksum()
             ? tcp::TxChecksum::kOffloadPseudoHeader
             : tcp::TxChecksum::kSoftware;
}

std::uint16_t CoreNet::mtu() const { return shared_->port->mtu(); }

}  // namespace junction::net::dpdk
