// dpdk_idle_backoff_test.cc — a core's idle back-off restarts after traffic that the
// scheduler's poll hook handled, not only after traffic the idle ticker found itself.
//
// The setup: a net_ring port with no rx interrupts and an idle back-off that may grow to
// 200 ms. For 300 ms the core is kept busy (a uthread yielding in a loop) while a peer thread
// feeds it a datagram every 200 us: the poll hook, which runs on every scheduler pass,
// takes them all, so every tick of the idle ticker finds the port empty. Then the core goes
// idle and, 5 ms later, one marker datagram comes. It must be read within a few ms. When the
// ticker backed off on its own empty passes alone, its period had grown to the 200 ms bound
// during the busy phase and the marker waited for that (the 2 ms tail of the load tests at
// moderate rates, with the node's default bound of 2 ms).
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

const Ipv4Addr kOurIp(10, 0, 2, 2);
const Ipv4Addr kPeerIp(10, 0, 2, 1);
const rte_ether_addr kPeerMac{{0x02, 0x11, 0x22, 0x33, 0x44, 0x77}};
constexpr std::uint16_t kPort = 7400;

TEST(DpdkIdleBackoffTest, TrafficTheBusyCoreHandledRestartsTheIdleBackoff) {
  ASSERT_TRUE(StartEal(TestOptions()).has_value());
  rte_mempool* pool = rte_pktmbuf_pool_create("backoff_pool", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  ASSERT_NE(pool, nullptr);
  rte_ring* rx = rte_ring_create("backoff_rx", 4096, 0, 0);
  rte_ring* tx = rte_ring_create("backoff_tx", 4096, 0, 0);
  ASSERT_TRUE(rx != nullptr && tx != nullptr);
  const int port = rte_eth_from_rings("net_ring_backoff", &rx, 1, &tx, 1, 0);
  ASSERT_GE(port, 0);
  char name[RTE_ETH_NAME_MAX_LEN];
  rte_eth_dev_get_name_by_port(static_cast<std::uint16_t>(port), name);
  rte_ether_addr our_mac{};
  ASSERT_EQ(rte_eth_macaddr_get(static_cast<std::uint16_t>(port), &our_mac), 0);

  StackOptions o;
  o.dpdk = TestOptions();
  o.dpdk.port = name;
  o.dpdk.ip = kOurIp;
  o.dpdk.idle_poll_max_us = 200'000;  // far past the bound checked below
  auto datagram = [&](const std::string& text) {
    return ToMbuf(pool, Ipv4Frame(our_mac, kPeerMac, kPeerIp, kOurIp, IPPROTO_UDP, Udp(9, kPort, text)));
  };

  enum Phase : int { kWaiting, kBusy, kQuiet, kDone };
  std::atomic<int> phase{kWaiting};
  std::atomic<std::int64_t> marker_sent_ns{0};
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  // The peer: a datagram every 200 us while the core is busy; the marker 5 ms after it went
  // quiet. It also drains what the stack sends (nothing is expected but ARP).
  std::thread peer([&] {
    while (phase.load() == kWaiting) std::this_thread::sleep_for(100us);
    int n = 0;
    while (phase.load() == kBusy) {
      rte_mbuf* m = datagram(fmt::format("busy {}", n++));
      if (m != nullptr && rte_ring_enqueue(rx, m) != 0) rte_pktmbuf_free(m);
      std::this_thread::sleep_for(200us);
    }
    std::this_thread::sleep_for(5ms);
    marker_sent_ns = now_ns();
    rte_mbuf* m = datagram("marker");
    if (m != nullptr && rte_ring_enqueue(rx, m) != 0) rte_pktmbuf_free(m);
    while (phase.load() != kDone) std::this_thread::sleep_for(1ms);
    void* f;
    while (rte_ring_dequeue(tx, &f) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(f));
  });

  std::int64_t waited_us = -1;
  std::uint64_t busy_received = 0;
  sched::testing::RunOnCores(1, [&] {
    auto s = DpdkStack::Create(o);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    auto sock = (*s)->BindUdp(Endpoint{Ipv4Addr::Any(), kPort});
    ASSERT_TRUE(sock.has_value());
    // Busy: only the poll hook sees the port (each Yield is a scheduler pass).
    phase = kBusy;
    const auto busy_until = Clock::now() + 300ms;
    while (Clock::now() < busy_until) sched::Yield();
    busy_received = (*s)->counters().Total().rx_packets;
    std::array<std::byte, 256> buf;
    while (sock->RecvFrom(buf, Clock::now()).has_value()) {
    }
    phase = kQuiet;  // from here the core idles: only the ticker polls
    for (;;) {
      auto d = sock->RecvFrom(buf, Clock::now() + 2s);
      if (!d) break;
      if (std::string_view(reinterpret_cast<const char*>(buf.data()), d->size) == "marker") {
        waited_us = (now_ns() - marker_sent_ns.load()) / 1000;
        break;
      }
    }
    phase = kDone;
    sock->Close();
  });
  phase = kDone;
  peer.join();
  fmt::print("{} frames taken while busy; the marker waited {} us after a 5 ms idle gap\n",
             busy_received, waited_us);
  EXPECT_GT(busy_received, 100u) << "the busy phase fed the core too little to test anything";
  ASSERT_GE(waited_us, 0) << "the marker never arrived";
  EXPECT_LT(waited_us, 50'000) << "the idle ticker had backed off during the busy phase";
}

}  // namespace
}  // namespace junction::net::dpdk
