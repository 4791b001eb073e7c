// dpdk_tx_full_test.cc — frames a full TX ring refuses are retried promptly: a net_ring port
// whose TX ring holds 15 frames, a stack whose idle back-off may grow to 200 ms, and a peer
// (a plain thread) that starts draining the ring only after the stack went quiet. Every
// frame must arrive within a few poll periods of the drain starting, not after the idle
// back-off (the poll pass counts retried frames as work; a holding core polls at <= 128 us).
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "junction/net/dpdk/dpdk_stack.h"
#include "junction/net/dpdk/dpdk_test_util.h"
#include "junction/sched/test_util.h"

namespace junction::net::dpdk {
namespace {

using namespace std::chrono_literals;
using namespace testing;

const Ipv4Addr kOurIp(10, 0, 1, 2);
const Ipv4Addr kPeerIp(10, 0, 1, 1);
const rte_ether_addr kPeerMac{{0x02, 0x11, 0x22, 0x33, 0x44, 0x66}};
const rte_ether_addr kBroadcast{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

TEST(DpdkTxFullTest, RefusedFramesGoOutPromptlyOnceTheRingDrains) {
  ASSERT_TRUE(StartEal(TestOptions()).has_value());
  rte_mempool* pool = rte_pktmbuf_pool_create("txfull_pool", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  ASSERT_NE(pool, nullptr);
  rte_ring* rx = rte_ring_create("txfull_rx", 256, 0, 0);
  rte_ring* tx = rte_ring_create("txfull_tx", 16, 0, 0);  // 15 frames
  ASSERT_TRUE(rx != nullptr && tx != nullptr);
  const int port = rte_eth_from_rings("net_ring_txfull", &rx, 1, &tx, 1, 0);
  ASSERT_GE(port, 0);
  char name[RTE_ETH_NAME_MAX_LEN];
  rte_eth_dev_get_name_by_port(static_cast<std::uint16_t>(port), name);

  StackOptions o;
  o.dpdk = TestOptions();
  o.dpdk.port = name;
  o.dpdk.ip = kOurIp;
  o.dpdk.idle_poll_max_us = 200'000;  // an idle back-off far longer than the bound below
  constexpr int kDatagrams = 40;
  std::atomic<bool> go{false};
  std::atomic<std::int64_t> took_us{-1};
  std::atomic<int> seen{0};
  auto drain = [&](bool count) {
    void* m;
    while (rte_ring_dequeue(tx, &m) == 0) {
      auto* mb = static_cast<rte_mbuf*>(m);
      const auto* p = rte_pktmbuf_mtod(mb, const std::uint8_t*);
      if (count && p[13] == 0x00 && p[23] == IPPROTO_UDP) seen.fetch_add(1);
      rte_pktmbuf_free(mb);
    }
  };
  // The peer: waits for `go`, then drains as fast as it can until every datagram came.
  std::thread peer([&] {
    while (!go.load()) std::this_thread::sleep_for(1ms);
    const auto t0 = std::chrono::steady_clock::now();
    while (seen.load() < kDatagrams && std::chrono::steady_clock::now() - t0 < 2s) drain(true);
    if (seen.load() == kDatagrams) {
      took_us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - t0).count();
    }
  });

  sched::testing::RunOnCores(1, [&] {
    auto s = DpdkStack::Create(o);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    // Learn the peer's MAC from its request (our reply goes out and is drained here).
    rte_mbuf* m = ToMbuf(pool, ArpFrame(RTE_ARP_OP_REQUEST, kPeerMac, kPeerIp, {}, kOurIp, kBroadcast));
    ASSERT_EQ(rte_ring_enqueue(rx, m), 0);
    while ((*s)->counters().Total().arp_in == 0) sched::SleepFor(200us);
    sched::SleepFor(1ms);
    drain(false);
    auto sock = (*s)->BindUdp(Endpoint{Ipv4Addr::Any(), 7300});
    ASSERT_TRUE(sock.has_value());
    for (int i = 0; i < kDatagrams; ++i) {
      ASSERT_TRUE(sock->SendTo(std::as_bytes(std::span("datagram", 8)), Endpoint{kPeerIp, 9}).has_value());
    }
    EXPECT_TRUE((*s)->core(0).holding()) << "the ring took 15, the core holds the rest";
    EXPECT_EQ((*s)->counters().Total().drop_no_buffer, 0u) << "refused frames are kept";
    // Quiet: nothing arrives, the stack's idle back-off grows; the peer starts draining later.
    // Sleep in long stretches so that only the stack's own ticker polls.
    sched::SleepFor(150ms);
    go = true;
    sched::SleepFor(300ms);
    sock->Close();
  });
  peer.join();
  (void)kBroadcast;
  EXPECT_EQ(seen.load(), kDatagrams);
  fmt::print("all {} datagrams out {} us after the peer started draining\n", kDatagrams, took_us.load());
  EXPECT_GE(took_us.load(), 0);
  EXPECT_LT(took_us.load(), 50'000) << "held frames waited for the idle back-off";
}

}  // namespace
}  // namespace junction::net::dpdk
