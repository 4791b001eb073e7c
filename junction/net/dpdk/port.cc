// port.cc — ethdev bring-up in the l2fwd order (see port.h).
#include "junction/net/dpdk/port.h"

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <bit>
#include <map>
#include <memory>

#include "junction/net/dpdk/arp.h"
#include "junction/net/dpdk/burst_guard.h"
#include "junction/net/dpdk/fault_injector.h"

namespace junction::net::dpdk {
namespace {

Error DpdkError(std::string what, int rc) {
  return Error(ErrorCode::kUnavailable,
               fmt::format("dpdk: {} failed: {}", what, rte_strerror(rc < 0 ? -rc : rc)));
}

std::map<std::uint16_t, std::unique_ptr<Port>>& Ports() {
  static auto* m = new std::map<std::uint16_t, std::unique_ptr<Port>>();
  return *m;
}

int pool_generation = 0;

}  // namespace

std::uint32_t PoolSize(std::uint16_t rxd, std::uint16_t txd, std::uint16_t burst) {
  // Held between passes: the TX buffer, an RX and a TX fault injector (each kMaxHeld delayed
  // plus one reordered frame), frames queued for ARP.
  const std::uint32_t held = kTxBufFrames + 2u * (FaultInjector::kMaxHeld + 1) + ArpTable::kQueued;
  const std::uint32_t need = std::uint32_t{rxd} + txd + 4u * burst + kSteerRingSize +
                             kSocketQueueBudget + kPoolCache * 2 + held;
  return std::bit_ceil(need + 1) - 1;
}

Status<Port*> Port::Open(const DpdkOptions& options, int num_queues) {
  std::uint16_t id = 0;
  if (!options.port.empty()) {
    if (rte_eth_dev_get_port_by_name(options.port.c_str(), &id) != 0) {
      std::vector<std::string> names;
      std::uint16_t p;
      RTE_ETH_FOREACH_DEV(p) {
        char n[RTE_ETH_NAME_MAX_LEN];
        if (rte_eth_dev_get_name_by_port(p, n) == 0) names.emplace_back(n);
      }
      return MakeError(ErrorCode::kNotFound,
                       fmt::format("dpdk port '{}' does not exist (ports: [{}]); add it with "
                                   "a --vdev in net.dpdk.eal_args",
                                   options.port, fmt::join(names, ", ")));
    }
  } else {
    if (rte_eth_dev_count_avail() == 0) {
      return MakeError(ErrorCode::kNotFound,
                       "dpdk: no ports; add one with a --vdev in net.dpdk.eal_args (e.g. "
                       "--vdev=net_tap0,iface=fn0)");
    }
    id = rte_eth_find_next_owned_by(0, RTE_ETH_DEV_NO_OWNER);
  }
  auto& ports = Ports();
  auto it = ports.find(id);
  if (it == ports.end()) {
    auto p = std::make_unique<Port>();
    p->id_ = id;
    it = ports.emplace(id, std::move(p)).first;
  }
  Port* port = it->second.get();
  if (port->started_ && port->num_queues_ == num_queues) return port;
  if (auto s = port->Configure(options, num_queues); !s) return std::unexpected(s.error());
  return port;
}

Status<void> Port::Configure(const DpdkOptions& options, int num_queues) {
  char n[RTE_ETH_NAME_MAX_LEN] = {};
  rte_eth_dev_get_name_by_port(id_, n);
  name_ = n;
  if (started_) {
    if (int rc = rte_eth_dev_stop(id_); rc != 0) return std::unexpected(DpdkError("dev_stop", rc));
    started_ = false;
  }
  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(id_, &info); rc != 0) {
    return std::unexpected(DpdkError(fmt::format("dev_info_get({})", name_), rc));
  }
  if (num_queues > info.max_rx_queues || num_queues > info.max_tx_queues) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("dpdk port {}: {} cores need {} queue pairs, the device has "
                                 "{} rx / {} tx; use fewer runtime cores or a device with more "
                                 "queues (net_tap: queues=N)",
                                 name_, num_queues, num_queues, info.max_rx_queues,
                                 info.max_tx_queues));
  }
  rte_eth_conf conf{};
  const std::uint64_t want_rss =
      RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP;
  rss_ = num_queues > 1 && (info.flow_type_rss_offloads & want_rss) != 0;
  if (rss_) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = want_rss & info.flow_type_rss_offloads;
  }
  const std::uint64_t tx_l4 = RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
  tx_ip_cksum_ = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
  tx_l4_cksum_ = (info.tx_offload_capa & tx_l4) == tx_l4;
  if (tx_ip_cksum_) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
  if (tx_l4_cksum_) conf.txmode.offloads |= tx_l4;
  // No MBUF_FAST_FREE: a queue sends mbufs of other cores' pools (steered frames answered
  // in place, the fault injector's copies).
  const std::uint64_t rx_ck = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
                              RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
  rx_cksum_ = (info.rx_offload_capa & rx_ck) == rx_ck;
  if (rx_cksum_) conf.rxmode.offloads |= rx_ck;
  conf.intr_conf.rxq = 1;

  int rc = rte_eth_dev_configure(id_, num_queues, num_queues, &conf);
  if (rc != 0) {
    conf.intr_conf.rxq = 0;  // a PMD that refuses rx interrupts: poll it
    rc = rte_eth_dev_configure(id_, num_queues, num_queues, &conf);
  }
  if (rc != 0) return std::unexpected(DpdkError(fmt::format("configure({})", name_), rc));
  const bool intr_asked = conf.intr_conf.rxq != 0;

  nb_rxd_ = options.rx_descriptors;
  nb_txd_ = options.tx_descriptors;
  if (int r = rte_eth_dev_adjust_nb_rx_tx_desc(id_, &nb_rxd_, &nb_txd_); r != 0) {
    return std::unexpected(DpdkError("adjust_nb_rx_tx_desc", r));
  }
  const int socket = rte_eth_dev_socket_id(id_) < 0 ? 0 : rte_eth_dev_socket_id(id_);
  const std::uint32_t pool_size = PoolSize(nb_rxd_, nb_txd_, options.burst);
  pools_.assign(num_queues, nullptr);
  intr_fds_.assign(num_queues, -1);
  const int gen = pool_generation++;
  for (int q = 0; q < num_queues; ++q) {
    const std::string pname = fmt::format("fn_p{}_g{}_q{}", id_, gen, q);
    pools_[q] = rte_pktmbuf_pool_create(pname.c_str(), pool_size, kPoolCache, 0,
                                        RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (pools_[q] == nullptr) {
      return std::unexpected(DpdkError(fmt::format("mbuf pool of {} for queue {}", pool_size, q),
                                       rte_errno));
    }
    rte_eth_rxconf rxq = info.default_rxconf;
    rxq.offloads = conf.rxmode.offloads;
    if (int r = rte_eth_rx_queue_setup(id_, q, nb_rxd_, socket, &rxq, pools_[q]); r != 0) {
      return std::unexpected(DpdkError(fmt::format("rx_queue_setup({})", q), r));
    }
    rte_eth_txconf txq = info.default_txconf;
    txq.offloads = conf.txmode.offloads;
    if (int r = rte_eth_tx_queue_setup(id_, q, nb_txd_, socket, &txq); r != 0) {
      return std::unexpected(DpdkError(fmt::format("tx_queue_setup({})", q), r));
    }
  }
  if (int r = rte_eth_dev_start(id_); r != 0) {
    return std::unexpected(DpdkError(fmt::format("dev_start({})", name_), r));
  }
  started_ = true;
  num_queues_ = num_queues;
  rte_eth_macaddr_get(id_, &mac_);
  std::uint16_t mtu = 1500;
  if (rte_eth_dev_get_mtu(id_, &mtu) == 0 && mtu >= 576) mtu_ = mtu;
  // An rx-interrupt fd is used only where it is level-readable while frames wait and needs
  // no acknowledging read: a PMD that implements rx_intr_enable, or net_tap, whose vector
  // fds are its queues' tap fds (it has no enable op). memif has neither: it is polled.
  const bool tap = std::string_view(info.driver_name) == "net_tap";
  unmaps_under_bursts_ = std::string_view(info.driver_name) == "net_memif";
  if (unmaps_under_bursts_) InstallBurstGuard();
  if (intr_asked) {
    for (int q = 0; q < num_queues; ++q) {
      const int rc = rte_eth_dev_rx_intr_enable(id_, q);
      if (rc == 0 || (tap && rc == -ENOTSUP)) {
        intr_fds_[q] = rte_eth_dev_rx_intr_ctl_q_get_fd(id_, q);
      }
    }
  }
  spdlog::info("dpdk: port {} ({}) up: {} queue pairs, {} rx / {} tx descriptors, pools of {} "
               "mbufs, rss {}, rx interrupts {}, tx checksum offload ip {} l4 {}",
               id_, name_, num_queues, nb_rxd_, nb_txd_, pool_size, rss_ ? "on" : "off",
               intr_fds_[0] >= 0 ? "on" : "off (slow poll)", tx_ip_cksum_, tx_l4_cksum_);
  return {};
}

}  // namespace junction::net::dpdk
