// dpdk_test_util.h — helpers for the dpdk backend's tests: the EAL once per test process, and
// frames crafted byte by byte (Ethernet, ARP, IPv4, ICMP, UDP, TCP) with correct checksums
// that a test may then break.
#pragma once

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <cstring>
#include <string>
#include <vector>

#include "junction/net/dpdk/eal.h"
#include "junction/net/endpoint.h"

namespace junction::net::dpdk::testing {

inline DpdkOptions TestOptions() {
  DpdkOptions o;
  o.hugepages = "auto";
  o.rx_descriptors = 256;
  o.tx_descriptors = 256;
  return o;
}

using Bytes = std::vector<std::uint8_t>;

inline void PutMac(std::uint8_t* p, const rte_ether_addr& m) { std::memcpy(p, m.addr_bytes, 6); }

inline Bytes Eth(const rte_ether_addr& dst, const rte_ether_addr& src, std::uint16_t type) {
  Bytes b(14);
  PutMac(b.data(), dst);
  PutMac(b.data() + 6, src);
  b[12] = type >> 8;
  b[13] = type & 0xff;
  return b;
}

inline Bytes ArpFrame(std::uint16_t op, const rte_ether_addr& sha, Ipv4Addr sip,
                      const rte_ether_addr& tha, Ipv4Addr tip, const rte_ether_addr& eth_dst) {
  Bytes b = Eth(eth_dst, sha, RTE_ETHER_TYPE_ARP);
  rte_arp_hdr a{};
  a.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
  a.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  a.arp_hlen = 6;
  a.arp_plen = 4;
  a.arp_opcode = rte_cpu_to_be_16(op);
  a.arp_data.arp_sha = sha;
  a.arp_data.arp_sip = rte_cpu_to_be_32(sip.host_order());
  a.arp_data.arp_tha = tha;
  a.arp_data.arp_tip = rte_cpu_to_be_32(tip.host_order());
  const auto* p = reinterpret_cast<const std::uint8_t*>(&a);
  b.insert(b.end(), p, p + sizeof(a));
  return b;
}

// An IPv4 frame around `l4` (checksums right; UDP's and TCP's too when proto is 17 or 6).
inline Bytes Ipv4Frame(const rte_ether_addr& dst_mac, const rte_ether_addr& src_mac, Ipv4Addr src,
                       Ipv4Addr dst, std::uint8_t proto, Bytes l4) {
  Bytes b = Eth(dst_mac, src_mac, RTE_ETHER_TYPE_IPV4);
  rte_ipv4_hdr ip{};
  ip.version_ihl = RTE_IPV4_VHL_DEF;
  ip.total_length = rte_cpu_to_be_16(static_cast<std::uint16_t>(20 + l4.size()));
  ip.time_to_live = 64;
  ip.next_proto_id = proto;
  ip.src_addr = rte_cpu_to_be_32(src.host_order());
  ip.dst_addr = rte_cpu_to_be_32(dst.host_order());
  ip.hdr_checksum = rte_ipv4_cksum(&ip);
  if (proto == IPPROTO_UDP && l4.size() >= 8) {
    l4[6] = l4[7] = 0;
    const std::uint16_t ck = rte_ipv4_udptcp_cksum(&ip, l4.data());
    std::memcpy(&l4[6], &ck, 2);
  }
  if (proto == IPPROTO_TCP && l4.size() >= 20) {
    l4[16] = l4[17] = 0;
    const std::uint16_t ck = rte_ipv4_udptcp_cksum(&ip, l4.data());
    std::memcpy(&l4[16], &ck, 2);
  }
  const auto* p = reinterpret_cast<const std::uint8_t*>(&ip);
  b.insert(b.end(), p, p + sizeof(ip));
  b.insert(b.end(), l4.begin(), l4.end());
  return b;
}

inline Bytes Udp(std::uint16_t sport, std::uint16_t dport, const std::string& payload) {
  Bytes b(8);
  b[0] = sport >> 8;
  b[1] = sport & 0xff;
  b[2] = dport >> 8;
  b[3] = dport & 0xff;
  const std::size_t len = 8 + payload.size();
  b[4] = len >> 8;
  b[5] = len & 0xff;
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// A TCP segment with a 20-byte header (no options) and checksum 0 (Ipv4Frame fills it in).
inline Bytes Tcp(std::uint16_t sport, std::uint16_t dport, std::uint32_t seq, std::uint32_t ack,
                 std::uint8_t flags, std::uint16_t window, const std::string& payload = "") {
  Bytes b(20);
  auto put16 = [&](std::size_t at, std::uint16_t v) {
    b[at] = v >> 8;
    b[at + 1] = v & 0xff;
  };
  put16(0, sport);
  put16(2, dport);
  put16(4, static_cast<std::uint16_t>(seq >> 16));
  put16(6, static_cast<std::uint16_t>(seq));
  put16(8, static_cast<std::uint16_t>(ack >> 16));
  put16(10, static_cast<std::uint16_t>(ack));
  b[12] = 5 << 4;  // data offset: 5 words
  b[13] = flags;
  put16(14, window);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// A TCP segment parsed back from a frame the stack sent (no IP options).
struct TcpSeen {
  std::uint16_t sport = 0, dport = 0;
  std::uint32_t seq = 0, ack = 0;
  std::uint8_t flags = 0;
  bool checksum_ok = false;
};
inline bool ParseTcpFrame(const Bytes& f, TcpSeen* out) {
  if (f.size() < 54 || f[12] != 0x08 || f[13] != 0x00 || f[23] != IPPROTO_TCP) return false;
  auto get16 = [&](std::size_t at) { return static_cast<std::uint16_t>(f[at] << 8 | f[at + 1]); };
  const std::size_t t = 34;
  out->sport = get16(t);
  out->dport = get16(t + 2);
  out->seq = std::uint32_t{get16(t + 4)} << 16 | get16(t + 6);
  out->ack = std::uint32_t{get16(t + 8)} << 16 | get16(t + 10);
  out->flags = f[t + 13];
  const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(&f[14]);
  // Over a right TCP checksum the complemented sum is 0 (UDP's 0 -> 0xffff rule is not applied).
  out->checksum_ok = rte_ipv4_udptcp_cksum(ip, &f[t]) == 0;
  return true;
}

inline Bytes IcmpEcho(std::uint16_t id, std::uint16_t seq, const std::string& payload) {
  Bytes b(8);
  b[0] = RTE_IP_ICMP_ECHO_REQUEST;
  b[4] = id >> 8;
  b[5] = id & 0xff;
  b[6] = seq >> 8;
  b[7] = seq & 0xff;
  b.insert(b.end(), payload.begin(), payload.end());
  const std::uint16_t ck = static_cast<std::uint16_t>(~rte_raw_cksum(b.data(), b.size()));
  std::memcpy(&b[2], &ck, 2);
  return b;
}

inline rte_mbuf* ToMbuf(rte_mempool* pool, const Bytes& b) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  char* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(b.size()));
  std::memcpy(p, b.data(), b.size());
  return m;
}

inline Bytes FromMbuf(rte_mbuf* m) {
  const auto* p = rte_pktmbuf_mtod(m, const std::uint8_t*);
  return Bytes(p, p + rte_pktmbuf_data_len(m));
}

}  // namespace junction::net::dpdk::testing
