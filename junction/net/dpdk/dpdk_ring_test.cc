// dpdk_ring_test.cc — the dpdk stack's layers driven through a real DPDK port (net_ring made
// from rings the test holds): crafted frames go in on an RX ring, what the stack sends comes
// out of a TX ring. Bad checksums, truncated or lying lengths, unknown ethertypes and
// protocols, fragments: dropped and counted, never a crash. ARP, ICMP echo, UDP both ways,
// software steering between cores, and the port layer's fault injector.
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <sys/resource.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <random>

#include "junction/net/dpdk/dpdk_ring_fixture.h"
#include "junction/net/dpdk/fault_injector.h"

namespace junction::net::dpdk {
namespace {

using namespace std::chrono_literals;
using namespace testing;
using testing::DpdkRingTest;

TEST_F(DpdkRingTest, AnswersArpRequestsForItsAddressOnly) {
  Run(1, [&](DpdkStack& s) {
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REQUEST, kPeerMac, kPeerIp, {}, kOurIp, kBroadcast));
    auto sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    const Bytes& r = sent[0];
    ASSERT_GE(r.size(), 42u);
    EXPECT_EQ(std::memcmp(&r[0], kPeerMac.addr_bytes, 6), 0);  // to the asker
    EXPECT_EQ(r[12], 0x08);
    EXPECT_EQ(r[13], 0x06);
    EXPECT_EQ(r[21], RTE_ARP_OP_REPLY);
    EXPECT_EQ(std::memcmp(&r[22], mac_.addr_bytes, 6), 0);  // our MAC as the answer
    EXPECT_EQ(s.counters().Total().arp_in, 1u);
    // For another host: not answered.
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REQUEST, kPeerMac, kPeerIp, {}, Ipv4Addr(10, 0, 0, 9),
                              kBroadcast));
    EXPECT_TRUE(Sent().empty());
    EXPECT_EQ(s.counters().Total().drop_not_for_us, 1u);
    // Malformed ARP (hardware length 7).
    Bytes bad = ArpFrame(RTE_ARP_OP_REQUEST, kPeerMac, kPeerIp, {}, kOurIp, kBroadcast);
    bad[18] = 7;
    InjectAndWait(s, bad);
    Bytes cut(bad.begin(), bad.begin() + 30);
    InjectAndWait(s, cut);
    EXPECT_EQ(s.counters().Total().drop_malformed, 2u);
  });
}

TEST_F(DpdkRingTest, AnswersIcmpEchoWithRightChecksums) {
  Run(1, [&](DpdkStack& s) {
    InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_ICMP,
                               IcmpEcho(7, 1, "ping payload")));
    auto sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    const Bytes& r = sent[0];
    ASSERT_EQ(r.size(), 14u + 20 + 8 + 12);
    EXPECT_EQ(std::memcmp(&r[0], kPeerMac.addr_bytes, 6), 0);
    EXPECT_EQ(rte_raw_cksum(&r[14], 20), 0xffff);  // IPv4 header checksum
    EXPECT_EQ(r[34], RTE_IP_ICMP_ECHO_REPLY);
    EXPECT_EQ(rte_raw_cksum(&r[34], r.size() - 34), 0xffff);
    EXPECT_EQ(std::memcmp(&r[42], "ping payload", 12), 0);
    EXPECT_EQ(s.counters().Total().icmp_echo_replies, 1u);
    // A broken ICMP checksum is dropped and counted.
    Bytes bad = Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_ICMP, IcmpEcho(7, 2, "x"));
    bad[36] ^= 0xff;
    InjectAndWait(s, bad);
    EXPECT_TRUE(Sent().empty());
    EXPECT_EQ(s.counters().Total().drop_bad_checksum, 1u);
  });
}

TEST_F(DpdkRingTest, DropsAndCountsBadFrames) {
  Run(1, [&](DpdkStack& s) {
    const Bytes good = UdpTo(9999, "hello");  // no socket on 9999
    auto with = [&](auto edit) {
      Bytes b = good;
      edit(b);
      return b;
    };
    InjectAndWait(s, with([](Bytes& b) { b[24] ^= 0x55; }));            // IPv4 header checksum
    InjectAndWait(s, with([](Bytes& b) { b.back() ^= 0x01; }));         // UDP checksum
    InjectAndWait(s, Bytes(good.begin(), good.begin() + 10));            // shorter than Ethernet
    InjectAndWait(s, Bytes(good.begin(), good.begin() + 30));            // truncated IPv4 header
    InjectAndWait(s, with([](Bytes& b) { b[17] = 200; }));               // total length lies
    InjectAndWait(s, with([](Bytes& b) { b[14] = 0x44; }));              // IHL 4
    InjectAndWait(s, with([](Bytes& b) { b[14] = 0x65; }));              // version 6
    InjectAndWait(s, with([](Bytes& b) { b[39] = 60; }));                // UDP length lies
    InjectAndWait(s, with([](Bytes& b) { b[12] = 0x86; b[13] = 0xdd; })); // IPv6 ethertype
    InjectAndWait(s, with([](Bytes& b) { b[0] = 0x02; b[5] = 0x99; }));  // another MAC
    const Ipv4Addr other(10, 0, 0, 77);
    InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, other, IPPROTO_UDP, Udp(1, 2, "x")));
    InjectAndWait(s, Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, 47, Bytes(24)));  // GRE
    Bytes frag = good;
    frag[20] = 0x20;  // more fragments
    rte_ipv4_hdr* ip = reinterpret_cast<rte_ipv4_hdr*>(&frag[14]);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    InjectAndWait(s, frag);
    InjectAndWait(s, good);  // well formed, but nobody listens
    const NetCounters c = s.counters().Total();
    EXPECT_EQ(c.rx_packets, 14u);
    // A UDP checksum is checked on the socket's core only, after the port lookup: the broken
    // one counts as "no socket" here (nobody listens on 9999).
    EXPECT_EQ(c.drop_bad_checksum, 1u);
    EXPECT_EQ(c.drop_malformed, 6u);
    EXPECT_EQ(c.drop_unknown_proto, 2u);
    EXPECT_EQ(c.drop_not_for_us, 2u);
    EXPECT_EQ(c.drop_fragment, 1u);
    EXPECT_EQ(c.drop_no_socket, 2u);
    EXPECT_TRUE(Sent().empty());
  });
}

TEST_F(DpdkRingTest, RandomGarbageIsCountedNeverACrash) {
  Run(1, [&](DpdkStack& s) {
    std::mt19937 rng(42);
    const Bytes good = UdpTo(9999, "some payload of a datagram");
    int injected = 0;
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < 50; ++i) {
        Bytes b = good;
        const int flips = 1 + rng() % 4;
        for (int f = 0; f < flips; ++f) b[14 + rng() % (b.size() - 14)] = rng() & 0xff;
        if (rng() % 4 == 0) b.resize(rng() % b.size() + 1);
        Inject(b);
        injected++;
      }
      ASSERT_TRUE(WaitFor([&] { return s.counters().Total().rx_packets == std::uint64_t(injected); }));
    }
    sched::SleepFor(2ms);
    const NetCounters c = s.counters().Total();
    const std::uint64_t dropped = c.drop_bad_checksum + c.drop_malformed + c.drop_unknown_proto +
                                  c.drop_fragment + c.drop_not_for_us + c.drop_no_socket +
                                  c.icmp_echo_replies + c.arp_in;
    EXPECT_EQ(dropped, c.rx_packets) << "every frame is accounted for";
    Sent();
  });
}

TEST_F(DpdkRingTest, UdpBothWaysWithArpResolution) {
  Run(1, [&](DpdkStack& s) {
    auto sock = s.BindUdp(Endpoint{Ipv4Addr::Any(), 7000});
    ASSERT_TRUE(sock.has_value()) << sock.error().message();
    InjectAndWait(s, UdpTo(7000, "request"));
    std::array<std::byte, 64> buf;
    auto d = sock->RecvFrom(buf, Clock::now() + 1s);
    ASSERT_TRUE(d.has_value()) << d.error().message();
    EXPECT_EQ(std::string(reinterpret_cast<char*>(buf.data()), d->size), "request");
    EXPECT_EQ(d->from.addr, kPeerIp);
    EXPECT_EQ(d->from.port, 40000);
    // The reply waits for ARP: a request goes out first.
    ASSERT_TRUE(sock->SendTo(std::as_bytes(std::span("reply", 5)), d->from).has_value());
    auto sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0][13], 0x06);  // ARP
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REPLY, kPeerMac, kPeerIp, mac_, kOurIp, mac_));
    sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    const Bytes& r = sent[0];
    ASSERT_EQ(r.size(), 14u + 20 + 8 + 5);
    EXPECT_EQ(std::memcmp(&r[0], kPeerMac.addr_bytes, 6), 0);
    EXPECT_EQ(rte_raw_cksum(&r[14], 20), 0xffff);
    const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(&r[14]);
    EXPECT_EQ(rte_ipv4_udptcp_cksum(ip, &r[34]), 0xffff);  // a right checksum sums to all ones
    EXPECT_EQ(std::memcmp(&r[42], "reply", 5), 0);
    // Resolved now: the next one goes straight out.
    ASSERT_TRUE(sock->SendTo(std::as_bytes(std::span("again", 5)), d->from).has_value());
    EXPECT_EQ(Sent().size(), 1u);
    // Too big for one frame: refused (no fragmentation).
    std::vector<std::byte> big(1500);
    auto e = sock->SendTo(big, d->from);
    ASSERT_FALSE(e.has_value());
    EXPECT_EQ(e.error().code(), ErrorCode::kInvalidArgument);
    // Port in use.
    auto dup = s.BindUdp(Endpoint{Ipv4Addr::Any(), 7000});
    EXPECT_FALSE(dup.has_value());
    sock->Close();
    InjectAndWait(s, UdpTo(7000, "late"));
    EXPECT_EQ(s.counters().Total().drop_no_socket, 1u);
  });
}

TEST_F(DpdkRingTest, UnresolvedNextHopIsRetriedThenDroppedAndCounted) {
  Run(1, [&](DpdkStack& s) {
    auto sock = s.BindUdp(Endpoint{Ipv4Addr::Any(), 0});
    ASSERT_TRUE(sock.has_value());
    ASSERT_TRUE(sock->SendTo(std::as_bytes(std::span("x", 1)),
                             Endpoint{Ipv4Addr(10, 0, 0, 99), 9}).has_value());
    EXPECT_TRUE(WaitFor([&] { return s.counters().Total().drop_arp_unresolved == 1; }));
    int requests = 0;
    for (const Bytes& b : Sent()) requests += b[13] == 0x06;
    EXPECT_EQ(requests, 2);  // the first and one retry (arp_retries = 2)
    // Off the subnet with no gateway: an error that says so.
    auto e = sock->SendTo(std::as_bytes(std::span("x", 1)), Endpoint{Ipv4Addr(192, 168, 9, 9), 9});
    ASSERT_FALSE(e.has_value());
    EXPECT_NE(std::string(e.error().message()).find("gateway"), std::string::npos);
  });
}

TEST_F(DpdkRingTest, SteersADatagramToTheCoreThatOwnsItsSocket) {
  Run(2, [&](DpdkStack& s) {
    Status<UdpSocket> sock = MakeError(ErrorCode::kUnavailable, "unset");
    auto h = sched::Spawn([&] { sock = s.BindUdp(Endpoint{Ipv4Addr::Any(), 7100}); },
                          {.core = 1, .stealable = false});
    ASSERT_TRUE(h.has_value());
    h->Join();
    ASSERT_TRUE(sock.has_value()) << sock.error().message();
    InjectAndWait(s, UdpTo(7100, "to core 1"), /*q=*/0);
    std::array<std::byte, 64> buf;
    auto d = sock->RecvFrom(buf, Clock::now() + 1s);
    ASSERT_TRUE(d.has_value()) << d.error().message();
    EXPECT_EQ(d->size, 9u);
    EXPECT_EQ(s.counters().Read(0).rx_packets, 1u);  // arrived on queue 0
    sock->Close();
  });
}

TEST_F(DpdkRingTest, InjectedFaultsDropFramesAndAreCounted) {
  StackOptions o = Options();
  o.dpdk.faults.drop = 0.5;
  o.dpdk.faults.seed = 7;
  Run(1, [&](DpdkStack& s) {
    for (int i = 0; i < 200; ++i) Inject(UdpTo(9999, "x"));
    ASSERT_TRUE(WaitFor([&] { return s.fault_stats().seen == 200; }));
    const FaultStats f = s.fault_stats();
    EXPECT_GT(f.dropped, 60u);
    EXPECT_LT(f.dropped, 140u);
    EXPECT_EQ(s.counters().Total().drop_fault, f.dropped);
    EXPECT_EQ(s.counters().Total().rx_packets, 200 - f.dropped);
  }, o);
}

TEST_F(DpdkRingTest, AnIdleStackWithoutRxInterruptsBacksOffInsteadOfSpinning) {
  Run(2, [&](DpdkStack& s) {
    EXPECT_LT(s.port().rx_intr_fd(0), 0);  // net_ring has no rx interrupts: slow poll
    sched::SleepFor(50ms);                  // let the back-off reach its bound
    auto cpu = [] {
      rusage u{};
      getrusage(RUSAGE_SELF, &u);
      return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
             (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    };
    const double c0 = cpu();
    const auto t0 = Clock::now();
    sched::SleepFor(500ms);
    const double used = (cpu() - c0) / std::chrono::duration<double>(Clock::now() - t0).count();
    fmt::print("idle CPU with the slow poll (2 cores): {:.2f}% of one CPU\n", used * 100);
    EXPECT_LT(used, 0.25);
    // And it still answers promptly enough once traffic comes.
    InjectAndWait(s, ArpFrame(RTE_ARP_OP_REQUEST, kPeerMac, kPeerIp, {}, kOurIp, kBroadcast));
    EXPECT_EQ(Sent().size(), 1u);
  });
}

// --- the fault injector on its own ---

class FaultInjectorTest : public DpdkRingTest {};

std::vector<int> PassFrames(FaultInjector& inj, rte_mempool* pool, int frames) {
  std::vector<int> order;
  std::uint64_t now = 0;
  for (int i = 0; i < frames; ++i) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    *rte_pktmbuf_mtod(m, int*) = i;
    rte_pktmbuf_append(m, sizeof(int));
    rte_mbuf* out[8];
    int n = inj.Apply(&m, 1, out, 8, now, pool);
    now += 1000;
    n += inj.Release(now, out + n, 8 - n);
    for (int k = 0; k < n; ++k) {
      order.push_back(*rte_pktmbuf_mtod(out[k], int*));
      rte_pktmbuf_free(out[k]);
    }
  }
  rte_mbuf* out[FaultInjector::kMaxHeld + 1];
  const int n = inj.Release(UINT64_MAX, out, std::size(out));
  for (int k = 0; k < n; ++k) {
    order.push_back(*rte_pktmbuf_mtod(out[k], int*));
    rte_pktmbuf_free(out[k]);
  }
  return order;
}

TEST_F(FaultInjectorTest, SameSeedSameFaultsAndRatesAsAsked) {
  DpdkFaultOptions o;
  o.drop = 0.05;
  o.reorder = 0.10;
  o.duplicate = 0.01;
  o.delay = 0.02;
  o.delay_us = 5;
  o.seed = 1234;
  FaultInjector a(o, 0, 1'000'000'000), b(o, 0, 1'000'000'000);
  const auto ra = PassFrames(a, pool_, 2000), rb = PassFrames(b, pool_, 2000);
  EXPECT_EQ(ra, rb);
  const FaultStats& s = a.stats();
  EXPECT_EQ(s.seen, 2000u);
  EXPECT_NEAR(static_cast<double>(s.dropped), 100, 40);
  EXPECT_NEAR(static_cast<double>(s.reordered), 200, 60);
  EXPECT_NEAR(static_cast<double>(s.duplicated), 20, 15);
  EXPECT_EQ(ra.size(), 2000 - s.dropped + s.duplicated);  // nothing lost beyond the drops
  int out_of_order = 0;
  for (std::size_t i = 1; i < ra.size(); ++i) out_of_order += ra[i] < ra[i - 1];
  EXPECT_GT(out_of_order, 100);
  o.seed = 99;
  FaultInjector c(o, 0, 1'000'000'000);
  EXPECT_NE(PassFrames(c, pool_, 2000), ra);
  EXPECT_FALSE(FaultInjector::Validate(DpdkFaultOptions{.drop = 0.7, .reorder = 0.5}).has_value());
}

}  // namespace
}  // namespace junction::net::dpdk
