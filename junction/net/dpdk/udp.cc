// udp.cc — UDP sockets over the dpdk stack (see udp.h).
#include "junction/net/dpdk/udp.h"

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <fmt/format.h>

#include <cstring>
#include <mutex>

#include "junction/net/dpdk/dpdk_stack.h"
#include "junction/net/net_error.h"

namespace junction::net::dpdk {
namespace {

std::atomic<int> udp_ring_generation{0};

class DpdkUdp final : public UdpSocketImpl {
 public:
  DpdkUdp(DpdkStack* stack, UdpSock* s, Endpoint local) : stack_(stack), s_(s), local_(local) {}
  ~DpdkUdp() override { Close(); }

  Status<void> SendTo(std::span<const std::byte> payload, Endpoint to, Deadline deadline) override {
    StackShared& sh = stack_->shared();
    const int core = sched::CurrentCore();
    if (core < 0 || core >= sh.num_cores) {
      return MakeError(ErrorCode::kInvalidArgument,
                       What("SendTo", to) + ": call it from a uthread of the stack's runtime");
    }
    const std::size_t max = sh.port->mtu() - kIpLen - kUdpLen;
    if (payload.size() > max) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}: {} bytes is more than {} (the port's MTU less the "
                                   "headers; the dpdk stack does not fragment)",
                                   What("SendTo", to), payload.size(), max));
    }
    CoreNet* c = sh.cores[core];
    rte_mbuf* m = c->AllocFrame();
    while (m == nullptr) {  // the pool is empty: wait for frames to be freed
      if (sched::Clock::now() >= deadline) return std::unexpected(TimedOutError(What("SendTo", to)));
      sched::Yield();
      c = sh.cores[sched::CurrentCore()];
      m = c->AllocFrame();
    }
    char* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(kL4Offset + kUdpLen + payload.size()));
    auto* udp = reinterpret_cast<rte_udp_hdr*>(p + kL4Offset);
    udp->src_port = rte_cpu_to_be_16(local_.port);
    udp->dst_port = rte_cpu_to_be_16(to.port);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<std::uint16_t>(kUdpLen + payload.size()));
    std::memcpy(udp + 1, payload.data(), payload.size());
    auto s = c->SendIpv4(m, to.addr, IPPROTO_UDP, kUdpLen + payload.size());
    c->Flush();
    if (!s) return std::unexpected(Error(s.error().code(), What("SendTo", to) + ": " +
                                                               std::string(s.error().message())));
    return {};
  }

  Status<Datagram> RecvFrom(std::span<std::byte> buf, Deadline deadline) override {
    for (;;) {
      const std::uint64_t seen = s_->rd.epoch();
      rte_mbuf* m = nullptr;
      if (rte_ring_sc_dequeue(s_->rx, reinterpret_cast<void**>(&m)) == 0) {
        const auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len);
        const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*, m->l2_len + m->l3_len);
        const std::size_t len = rte_be_to_cpu_16(udp->dgram_len) - kUdpLen;
        Datagram d;
        d.size = len < buf.size() ? len : buf.size();
        d.truncated = len > buf.size();
        d.from = Endpoint{Ipv4Addr(rte_be_to_cpu_32(ip->src_addr)), rte_be_to_cpu_16(udp->src_port)};
        std::memcpy(buf.data(), udp + 1, d.size);
        rte_pktmbuf_free(m);
        return d;
      }
      switch (s_->rd.Wait(seen, deadline)) {
        case IoWaiter::kReady:
          break;
        case IoWaiter::kTimedOut:
          return std::unexpected(TimedOutError(What("RecvFrom", local_)));
        case IoWaiter::kBusy:
          return MakeError(ErrorCode::kInvalidArgument,
                           What("RecvFrom", local_) +
                               ": another uthread is already receiving; use one receiver");
      }
    }
  }

  Endpoint local_endpoint() const override { return local_; }

  void Close() override {
    if (s_ == nullptr) return;
    StackShared& sh = stack_->shared();
    {
      std::lock_guard lock(stack_->bind_lock());
      sh.udp_owner[s_->port].store(-1, std::memory_order_release);
      sh.udp_sock[s_->port].store(nullptr, std::memory_order_release);
    }
    sh.cores[s_->owner]->Retire(s_);
    s_ = nullptr;
  }

 private:
  std::string What(const char* op, Endpoint ep) const {
    return fmt::format("UdpSocket::{} {} (dpdk, bound to {})", op, ep.ToString(), local_.ToString());
  }

  DpdkStack* stack_;
  UdpSock* s_;
  Endpoint local_;
};

}  // namespace

void FreeUdpSock(UdpSock* s) {
  rte_mbuf* m;
  while (rte_ring_sc_dequeue(s->rx, reinterpret_cast<void**>(&m)) == 0) rte_pktmbuf_free(m);
  rte_ring_free(s->rx);
  delete s;
}

Status<UdpSocket> BindUdp(DpdkStack& stack, Endpoint local) {
  StackShared& sh = stack.shared();
  const int core = sched::CurrentCore();
  if (core < 0 || core >= sh.num_cores) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "BindUdp on the dpdk stack: call it from a uthread of the stack's runtime");
  }
  if (!local.addr.is_any() && local.addr != sh.ip) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("BindUdp {}: the dpdk stack's address is {}; bind to it or to "
                                 "0.0.0.0",
                                 local.ToString(), sh.ip.ToString()));
  }
  auto* s = new UdpSock();
  s->owner = core;
  const std::string name = fmt::format("fn_udp{}", udp_ring_generation++);
  s->rx = rte_ring_create(name.c_str(), kSocketRingSize, SOCKET_ID_ANY,
                          RING_F_SP_ENQ | RING_F_SC_DEQ);
  if (s->rx == nullptr) {
    delete s;
    return MakeError(ErrorCode::kUnavailable, "BindUdp on the dpdk stack: no memory for the "
                                              "socket's ring (too many sockets?)");
  }
  std::uint16_t port = local.port;
  {
    std::lock_guard lock(stack.bind_lock());
    if (port == 0) {
      std::uint16_t& next = stack.next_ephemeral();
      for (int tries = 0; tries < 16384; ++tries) {
        const std::uint16_t p = next;
        next = next == 65535 ? 49152 : next + 1;
        if (sh.udp_owner[p].load(std::memory_order_relaxed) < 0) {
          port = p;
          break;
        }
      }
    }
    if (port == 0 || sh.udp_owner[port].load(std::memory_order_relaxed) >= 0) {
      rte_ring_free(s->rx);
      delete s;
      return std::unexpected(AddressInUseError(fmt::format("BindUdp {} (dpdk)", local.ToString())));
    }
    s->port = port;
    sh.udp_sock[port].store(s, std::memory_order_release);
    sh.udp_owner[port].store(static_cast<std::int16_t>(core), std::memory_order_release);
  }
  return UdpSocket(std::make_unique<DpdkUdp>(&stack, s, Endpoint{sh.ip, port}),
                   stack.counters_for_sockets());
}

}  // namespace junction::net::dpdk
