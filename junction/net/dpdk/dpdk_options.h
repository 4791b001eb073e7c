// dpdk_options.h — what the dpdk stack is configured with (plain data, no DPDK headers).
//
// Lives apart from the stack so that StackOptions (stack.h) and the node's config can carry
// it without depending on DPDK. Filled from the node config's [net.dpdk] table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "junction/net/endpoint.h"

namespace junction::net {

// Seeded faults the port layer injects (fault_injector.h). Rates are probabilities in [0, 1]
// per frame; the same seed and the same frames give the same faults.
struct DpdkFaultOptions {
  double drop = 0;
  double reorder = 0;    // the frame is held back and released after the next one
  double duplicate = 0;  // the frame is delivered twice
  double delay = 0;      // the frame is held for delay_us
  std::uint32_t delay_us = 200;
  std::uint64_t seed = 1;
  bool rx = true;   // apply to received frames
  bool tx = false;  // apply to transmitted frames
  bool enabled() const { return drop > 0 || reorder > 0 || duplicate > 0 || delay > 0; }
};

struct DpdkOptions {
  // EAL arguments after argv[0], e.g. {"--no-pci", "--vdev=net_tap0,iface=fn0"}. The stack
  // adds a unique --file-prefix, and --no-huge -m 256 when hugepages are off or absent,
  // unless the arguments already say so.
  std::vector<std::string> eal_args = {"--no-pci", "--log-level=*:warning"};
  // "auto": hugepages when enough are free and hugetlbfs is mounted, --no-huge otherwise;
  // "on": fail without them; "off": always --no-huge.
  std::string hugepages = "auto";
  // The ethdev to use, by name (e.g. "net_tap0"); empty: the first port.
  std::string port;
  // This node's address on that port, its prefix, and the next hop for other subnets
  // (Any(): none; other destinations are then unreachable).
  Ipv4Addr ip = Ipv4Addr(10, 0, 0, 2);
  int prefix_len = 24;
  Ipv4Addr gateway = Ipv4Addr::Any();
  // Descriptors per RX and TX queue (adjusted to what the device allows) and the burst.
  std::uint16_t rx_descriptors = 1024;
  std::uint16_t tx_descriptors = 1024;
  std::uint16_t burst = 32;
  // ARP: how long a resolved entry is trusted, and how a pending one is retried.
  std::uint32_t arp_timeout_ms = 60'000;
  std::uint32_t arp_retry_ms = 500;
  std::uint32_t arp_retries = 3;
  // The longest an idle core sleeps between polls of a port without rx interrupts (memif):
  // the back-off doubles from 16 µs up to this.
  std::uint32_t idle_poll_max_us = 2000;
  DpdkFaultOptions faults;
};

}  // namespace junction::net
