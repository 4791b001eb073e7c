// dpdk_ring_fixture.h — the crafted-frame test fixture over a net_ring port: the test holds
// the port's RX rings (it enqueues frames it built byte by byte) and TX rings (it dequeues
// what the stack sent). One port with two queue pairs per test process, shared by the suites
// of that process; each test gets a fresh DpdkStack on 1 or 2 runtime cores.
#pragma once

#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "junction/net/dpdk/dpdk_stack.h"
#include "junction/net/dpdk/dpdk_test_util.h"
#include "junction/sched/test_util.h"

namespace junction::net::dpdk::testing {

using namespace std::chrono_literals;

const Ipv4Addr kOurIp(10, 0, 0, 2);
const Ipv4Addr kPeerIp(10, 0, 0, 1);
const rte_ether_addr kPeerMac{{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}};
const rte_ether_addr kBroadcast{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

class DpdkRingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (pool_ != nullptr) return;  // one port per process, shared by the suites
    auto eal = StartEal(TestOptions());
    ASSERT_TRUE(eal.has_value()) << eal.error().message();
    pool_ = rte_pktmbuf_pool_create("ring_test_pool", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool_, nullptr);
    for (int q = 0; q < 2; ++q) {
      rx_[q] = rte_ring_create(("trx" + std::to_string(q)).c_str(), 1024, 0,
                               RING_F_SP_ENQ | RING_F_SC_DEQ);
      tx_[q] = rte_ring_create(("ttx" + std::to_string(q)).c_str(), 1024, 0,
                               RING_F_SP_ENQ | RING_F_SC_DEQ);
    }
    const int port = rte_eth_from_rings("net_ring_test", rx_, 2, tx_, 2, 0);
    ASSERT_GE(port, 0);
    char name[RTE_ETH_NAME_MAX_LEN];
    rte_eth_dev_get_name_by_port(port, name);
    port_name_ = name;
  }

  static StackOptions Options() {
    StackOptions o;
    o.dpdk = TestOptions();
    o.dpdk.port = port_name_;
    o.dpdk.ip = kOurIp;
    o.dpdk.arp_retry_ms = 20;
    o.dpdk.arp_retries = 2;
    return o;
  }

  // Runs body with a fresh stack on `cores` cores; the TX rings start empty.
  void Run(int cores, std::function<void(DpdkStack&)> body, StackOptions o = Options()) {
    for (auto* r : tx_) Drain(r);
    sched::testing::RunOnCores(cores, [&] {
      auto s = DpdkStack::Create(o);
      ASSERT_TRUE(s.has_value()) << s.error().message();
      mac_ = (*s)->port().mac();
      body(**s);
    });
  }

  static void Drain(rte_ring* r) {
    void* m;
    while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
  }
  void Inject(const Bytes& frame, int q = 0) {
    rte_mbuf* m = ToMbuf(pool_, frame);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(rte_ring_enqueue(rx_[q], m), 0);
  }
  // Frames the stack sent on queue q so far.
  std::vector<Bytes> Sent(int q = 0) {
    std::vector<Bytes> out;
    void* m;
    while (rte_ring_dequeue(tx_[q], &m) == 0) {
      out.push_back(FromMbuf(static_cast<rte_mbuf*>(m)));
      rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    }
    return out;
  }
  // Waits (sleeping, so the core polls) until pred() or 2 s.
  template <typename P>
  bool WaitFor(P pred) {
    const auto end = Clock::now() + 2s;
    while (!pred()) {
      if (Clock::now() > end) return false;
      sched::SleepFor(200us);
    }
    return true;
  }
  // Injects a frame and waits until the stack has taken it in.
  void InjectAndWait(DpdkStack& s, const Bytes& frame, int q = 0) {
    const auto before = s.counters().Total().rx_packets;
    Inject(frame, q);
    EXPECT_TRUE(WaitFor([&] { return s.counters().Total().rx_packets > before; }));
    sched::SleepFor(1ms);  // and handled it (a pass completes before the next poll)
  }
  Bytes UdpTo(std::uint16_t port, const std::string& payload) {
    return Ipv4Frame(mac_, kPeerMac, kPeerIp, kOurIp, IPPROTO_UDP, Udp(40000, port, payload));
  }

  static inline rte_mempool* pool_ = nullptr;
  static inline rte_ring* rx_[2] = {};
  static inline rte_ring* tx_[2] = {};
  static inline std::string port_name_;
  rte_ether_addr mac_{};
};

}  // namespace junction::net::dpdk::testing
