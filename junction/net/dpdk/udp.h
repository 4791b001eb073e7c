// udp.h — UDP sockets of the dpdk stack (the UdpSocket of socket.h over a DPDK port).
//
// A socket is owned by the core it was bound on: every datagram for its port is steered
// there, where the core's poll hook puts the mbuf on the socket's ring (single producer) and
// wakes the receiver (one notifier: the IoWaiter contract). RecvFrom runs on any core: it
// takes from the ring (single consumer), copies the payload out and frees the mbuf. SendTo
// builds the frame in an mbuf of the calling core's pool and puts it on that core's TX queue.
// Payloads are at most mtu - 28 bytes (1472 on Ethernet): this stack does not fragment.
#pragma once

#include <atomic>
#include <cstdint>

#include "junction/net/io_waiter.h"
#include "junction/net/socket.h"

struct rte_ring;

namespace junction::net::dpdk {

struct StackShared;

struct UdpSock {
  std::uint16_t port = 0;
  int owner = 0;
  rte_ring* rx = nullptr;  // of rte_mbuf*, l2_len/l3_len set to the header lengths
  IoWaiter rd;
  std::atomic<UdpSock*> retired_next{nullptr};
};

// Frees the socket and the mbufs still on its ring (on its owning core, after unbinding).
void FreeUdpSock(UdpSock* s);

class DpdkStack;
Status<UdpSocket> BindUdp(DpdkStack& stack, Endpoint local);

}  // namespace junction::net::dpdk
