// dpdk_ring_tcp_test.cc — crafted frames through the whole receive path of the dpdk stack
// (port, Ethernet, IPv4, CoreNet, the TCP engine) over a net_ring port the test holds: a SYN
// flood bounded by the backlog with no ring memory per half-open connection; bad TCP
// checksums, lying data offsets, truncated headers and segments to closed ports dropped,
// counted and (where RFC 9293 says so) answered with RST; TTL 0 and 1 delivered (RFC 1122);
// ARP entries expiring and resolved again; the fault injector replaced at run time.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "junction/net/dpdk/dpdk_ring_fixture.h"

namespace junction::net::dpdk {
namespace {

using namespace std::chrono_literals;
using namespace testing;
using testing::DpdkRingTest;

constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;

class DpdkRingTcpTest : public DpdkRingTest {
 protected:
  // The peer asks for our MAC first: the stack learns the peer's, so answers go straight out.
  void Introduce(DpdkStack& s) {
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REQUEST, kPeerMac, kPeerIp, {}, kOurIp, kBroadcast));
    ASSERT_EQ(Sent().size(), 1u);  // our ARP reply
  }
  Bytes TcpTo(std::uint16_t sport, std::uint16_t dport, std::uint32_t seq, std::uint32_t ack,
              std::uint8_t flags, const std::string& payload = "") {
    return Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_TCP,
                     Tcp(sport, dport, seq, ack, flags, 65535, payload));
  }
  std::vector<TcpSeen> SentTcp() {
    std::vector<TcpSeen> out;
    for (const Bytes& f : Sent()) {
      TcpSeen t;
      if (ParseTcpFrame(f, &t)) out.push_back(t);
    }
    return out;
  }
};

TEST_F(DpdkRingTcpTest, SynFloodThroughTheStackIsBoundedByTheBacklogAndHoldsNoRings) {
  Run(1, [&](DpdkStack& s) {
    Introduce(s);
    constexpr int kBacklog = 64, kSyns = 300;
    auto l = s.Listen(Endpoint{Ipv4Addr::Any(), 8080}, ListenOptions{.backlog = kBacklog});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    for (int i = 0; i < kSyns; ++i) {
      Inject(TcpTo(static_cast<std::uint16_t>(20000 + i), 8080, 1000u * i, 0, kSyn));
    }
    ASSERT_TRUE(WaitFor([&] { return s.counters().Total().tcp_drop_backlog == kSyns - kBacklog; }))
        << s.counters().Total().tcp_drop_backlog;
    sched::SleepFor(2ms);
    std::vector<TcpSeen> sent = SentTcp();
    ASSERT_EQ(sent.size(), static_cast<std::size_t>(kBacklog));  // one SYN,ACK per admitted SYN
    for (const TcpSeen& t : sent) {
      EXPECT_EQ(t.flags, kSyn | kAck);
      EXPECT_TRUE(t.checksum_ok);
      EXPECT_EQ(t.ack, 1000u * (t.dport - 20000) + 1);
    }
    tcp::Engine& e = s.tcp().engine(0);
    EXPECT_EQ(e.memory().conns, static_cast<std::size_t>(kBacklog));
    EXPECT_EQ(e.memory().ring_bytes, 0u) << "half-open connections hold no send/receive rings";
    // One handshake completes and is accepted; still no rings until data moves.
    const TcpSeen& first = sent[0];
    const std::uint32_t peer_seq = 1000u * (first.dport - 20000) + 1;
    InjectAndWait(s, TcpTo(first.dport, 8080, peer_seq, first.seq + 1, kAck));
    auto c = l->Accept(Clock::now() + 1s);
    ASSERT_TRUE(c.has_value()) << c.error().message();
    EXPECT_EQ(e.memory().ring_bytes, 0u);
    InjectAndWait(s, TcpTo(first.dport, 8080, peer_seq, first.seq + 1, kAck, "hi"));
    std::array<std::byte, 8> buf;
    auto n = c->Read(buf, Clock::now() + 1s);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 2u);
    EXPECT_GT(e.memory().ring_bytes, 0u);
    c->Close();
    l->Close();  // the other half-open ones are reset
    Sent();
  });
}

TEST_F(DpdkRingTcpTest, CraftedSegmentsAreDroppedCountedOrAnsweredThroughTheIpPath) {
  Run(1, [&](DpdkStack& s) {
    Introduce(s);
    auto l = s.Listen(Endpoint{Ipv4Addr::Any(), 8080});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    const NetCounters c0 = s.counters().Total();
    // A wrong TCP checksum (net_ring verifies nothing: the engine checks in software).
    Bytes bad = TcpTo(30000, 8080, 1, 0, kSyn);
    bad[34 + 16] ^= 0x5a;
    InjectAndWait(s, bad);
    // Data offsets beyond the segment: 60 bytes of header claimed in 20, 24 in 20; and below
    // the minimum (4 words).
    for (std::uint8_t off : {0xf0, 0x60, 0x40}) {
      Bytes seg = Tcp(30001, 8080, 1, 0, kSyn, 65535);
      seg[12] = off;
      InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_TCP, seg));
    }
    // A TCP header cut short inside a well-formed IPv4 datagram (12 bytes).
    Bytes cut_seg = Tcp(30002, 8080, 1, 0, kSyn, 65535);
    cut_seg.resize(12);
    InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_TCP, cut_seg));
    NetCounters c = s.counters().Total();
    EXPECT_EQ(c.drop_bad_checksum - c0.drop_bad_checksum, 1u);
    EXPECT_EQ(c.drop_malformed - c0.drop_malformed, 4u);
    EXPECT_TRUE(Sent().empty()) << "nothing answers a malformed segment";
    EXPECT_EQ(s.tcp().engine(0).num_conns(), 0u);
    // A SYN to a closed port: RST,ACK acknowledging it (RFC 9293 3.10.7.1), counted.
    InjectAndWait(s, TcpTo(30003, 9, 7000, 0, kSyn));
    std::vector<TcpSeen> r = SentTcp();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].flags, kRst | kAck);
    EXPECT_EQ(r[0].ack, 7001u);
    EXPECT_EQ(r[0].seq, 0u);
    EXPECT_EQ(r[0].sport, 9);
    EXPECT_EQ(r[0].dport, 30003);
    EXPECT_TRUE(r[0].checksum_ok);
    // An ACK to a closed port: RST with SEQ = its ACK; a RST: never answered.
    InjectAndWait(s, TcpTo(30003, 9, 7001, 424242, kAck | kFin));
    r = SentTcp();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].flags, kRst);
    EXPECT_EQ(r[0].seq, 424242u);
    InjectAndWait(s, TcpTo(30003, 9, 7001, 0, kRst));
    EXPECT_TRUE(Sent().empty());
    c = s.counters().Total();
    EXPECT_EQ(c.drop_no_socket - c0.drop_no_socket, 3u);
    EXPECT_EQ(c.tcp_resets - c0.tcp_resets, 2u);  // the two we sent
  });
}

TEST_F(DpdkRingTcpTest, DatagramsWithTtlZeroOrOneAreDeliveredToAHost) {
  // RFC 1122 3.2.1.7: a host MUST NOT discard a datagram just because it was received with
  // TTL less than 2 (only routers drop at 0, RFC 1812 5.3.1).
  Run(1, [&](DpdkStack& s) {
    for (std::uint8_t ttl : {0, 1}) {
      Bytes echo = Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_ICMP, IcmpEcho(9, ttl, "ttl"));
      auto* ip = reinterpret_cast<rte_ipv4_hdr*>(&echo[14]);
      ip->time_to_live = ttl;
      ip->hdr_checksum = 0;
      ip->hdr_checksum = rte_ipv4_cksum(ip);
      InjectAndWait(s, echo);
      auto sent = Sent();
      ASSERT_EQ(sent.size(), 1u) << "TTL " << int{ttl};
      EXPECT_EQ(sent[0][34], RTE_IP_ICMP_ECHO_REPLY);
      EXPECT_EQ(sent[0][22], 64) << "we send with our own TTL, never 0";
    }
    EXPECT_EQ(s.counters().Total().icmp_echo_replies, 2u);
    EXPECT_EQ(s.counters().Total().drop_malformed, 0u);
  });
}

TEST_F(DpdkRingTcpTest, ArpEntriesExpireAndAreResolvedAgain) {
  StackOptions o = Options();
  o.dpdk.arp_timeout_ms = 40;
  Run(1, [&](DpdkStack& s) {
    auto sock = s.BindUdp(Endpoint{Ipv4Addr::Any(), 7200});
    ASSERT_TRUE(sock.has_value());
    const Endpoint peer{kPeerIp, 9};
    const auto data = std::as_bytes(std::span("x", 1));
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REPLY, kPeerMac, kPeerIp, mac_, kOurIp, mac_));
    ASSERT_TRUE(sock->SendTo(data, peer).has_value());
    auto sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0][23], IPPROTO_UDP) << "resolved: straight out";
    sched::SleepFor(60ms);  // past arp_timeout_ms
    ASSERT_TRUE(sock->SendTo(data, peer).has_value());
    sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0][13], 0x06) << "expired: a new ARP request, the datagram waits";
    EXPECT_EQ(sent[0][21], RTE_ARP_OP_REQUEST);
    const auto* arp = reinterpret_cast<const rte_arp_hdr*>(&sent[0][14]);
    EXPECT_EQ(rte_be_to_cpu_32(arp->arp_data.arp_tip), kPeerIp.host_order());
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REPLY, kPeerMac, kPeerIp, mac_, kOurIp, mac_));
    int udp = 0;
    for (const Bytes& f : Sent()) {  // (a slow machine may have sent a retry request too)
      if (f[13] != 0x00 || f[23] != IPPROTO_UDP) continue;
      ++udp;
      EXPECT_EQ(std::memcmp(&f[0], kPeerMac.addr_bytes, 6), 0);
    }
    EXPECT_EQ(udp, 1) << "the queued datagram leaves once resolved";
  }, o);
}

TEST_F(DpdkRingTcpTest, FaultsReplacedAtRunTime) {
  Run(1, [&](DpdkStack& s) {
    for (int i = 0; i < 20; ++i) Inject(UdpTo(9999, "x"));
    ASSERT_TRUE(WaitFor([&] { return s.counters().Total().rx_packets == 20; }));
    // Drop everything received.
    ASSERT_TRUE(s.SetFaults(DpdkFaultOptions{.drop = 1.0, .seed = 3}).has_value());
    for (int i = 0; i < 20; ++i) Inject(UdpTo(9999, "x"));
    ASSERT_TRUE(WaitFor([&] { return s.fault_stats().dropped == 20; }));
    EXPECT_EQ(s.counters().Total().drop_fault, 20u);
    EXPECT_EQ(s.counters().Total().rx_packets, 20u);
    // Hold every transmitted frame for a long time: an echo reply is held, not sent; replacing
    // the faults drops it and counts it.
    ASSERT_TRUE(s.SetFaults(DpdkFaultOptions{.delay = 1.0, .delay_us = 10'000'000, .rx = false,
                                             .tx = true}).has_value());
    InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_ICMP, IcmpEcho(1, 1, "p")));
    EXPECT_TRUE(Sent().empty());
    EXPECT_EQ(s.fault_stats().delayed, 1u);
    ASSERT_TRUE(s.SetFaults(DpdkFaultOptions{}).has_value());
    EXPECT_EQ(s.counters().Total().drop_fault, 21u);
    // Off again: frames pass both ways.
    InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_ICMP, IcmpEcho(1, 2, "p")));
    EXPECT_EQ(Sent().size(), 1u);
    EXPECT_EQ(s.counters().Total().rx_packets, 22u);
    // Invalid rates are refused and change nothing.
    EXPECT_FALSE(s.SetFaults(DpdkFaultOptions{.drop = 2.0}).has_value());
  });
}

TEST(PoolSizeTest, CoversWhatACoreHoldsBetweenPasses) {
  // Large rings, where the power-of-two rounding no longer hides the held frames.
  const std::uint32_t rxd = 2048, txd = 2048, burst = 32;
  const std::uint32_t need = rxd + txd + 4 * burst + kSteerRingSize + kSocketQueueBudget +
                             2 * kPoolCache + kTxBufFrames + 2 * (FaultInjector::kMaxHeld + 1) +
                             ArpTable::kQueued;
  EXPECT_GE(PoolSize(rxd, txd, burst), need);
}

}  // namespace
}  // namespace junction::net::dpdk
