// loopback_udp.cc — the loopback backend's UDP sockets: a bounded queue of datagrams each.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "junction/net/loopback_registry.h"
#include "junction/net/net_error.h"

namespace junction::net::loopback {

// One bound socket's receive queue: records of {Header, payload} in a byte ring. A datagram
// that does not fit is dropped, as a full kernel socket buffer drops it.
struct UdpState {
  UdpState(Endpoint ep, std::size_t bytes) : local(ep), ring(bytes) {}
  struct Header {
    std::uint32_t size;
    std::uint32_t from_addr;
    std::uint16_t from_port;
  };
  sched::Spinlock lock;
  sched::WaitQueue readers{&lock};
  const Endpoint local;
  ByteRing ring;
  bool closed = false;
};

namespace {

class LoopbackUdp final : public UdpSocketImpl {
 public:
  LoopbackUdp(std::shared_ptr<Registry> reg, std::shared_ptr<UdpState> state)
      : reg_(std::move(reg)), state_(std::move(state)) {}
  ~LoopbackUdp() override { Close(); }

  Status<void> SendTo(std::span<const std::byte> payload, Endpoint to, Deadline) override {
    std::shared_ptr<UdpState> dst;
    {
      std::lock_guard l(reg_->lock);
      dst = FindLocked(reg_->udp, to);
    }
    if (dst == nullptr) return {};  // nobody bound there: lost, as UDP loses it
    const UdpState::Header h{static_cast<std::uint32_t>(payload.size()),
                             state_->local.addr.host_order(), state_->local.port};
    dst->lock.lock();
    if (dst->closed || dst->ring.space() < sizeof(h) + payload.size()) {
      dst->lock.unlock();
      return {};  // queue full: dropped
    }
    dst->ring.Put(&h, sizeof(h));
    dst->ring.Put(payload.data(), payload.size());
    sched::detail::Thread* r = dst->readers.PopWaiter();
    dst->lock.unlock();
    if (r != nullptr) sched::Ready(r);
    return {};
  }

  Status<Datagram> RecvFrom(std::span<std::byte> buf, Deadline deadline) override {
    const std::int64_t deadline_ns = ToDeadlineNs(deadline);
    UdpState& s = *state_;
    s.lock.lock();
    for (;;) {
      if (s.ring.size() > 0) {
        UdpState::Header h;
        s.ring.Get(&h, sizeof(h));
        Datagram d;
        d.size = std::min<std::size_t>(h.size, buf.size());
        d.truncated = h.size > buf.size();
        d.from = Endpoint{Ipv4Addr(h.from_addr), h.from_port};
        s.ring.Get(buf.data(), d.size);
        s.ring.Skip(h.size - d.size);
        s.lock.unlock();
        return d;
      }
      if (s.closed) {
        s.lock.unlock();
        return std::unexpected(
            ClosedError(fmt::format("UdpSocket::RecvFrom on {}", s.local.ToString())));
      }
      if (!s.readers.Wait(deadline_ns)) {
        return std::unexpected(
            TimedOutError(fmt::format("UdpSocket::RecvFrom on {}", s.local.ToString())));
      }
      s.lock.lock();
    }
  }

  Endpoint local_endpoint() const override { return state_->local; }

  void Close() override {
    {
      std::lock_guard l(reg_->lock);
      auto it = reg_->udp.find(state_->local);
      if (it != reg_->udp.end() && it->second == state_) reg_->udp.erase(it);
    }
    state_->lock.lock();
    state_->closed = true;
    sched::detail::Thread* r = state_->readers.PopAll();
    state_->lock.unlock();
    sched::WaitQueue::ReadyAll(r);
  }

 private:
  std::shared_ptr<Registry> reg_;
  std::shared_ptr<UdpState> state_;
};

}  // namespace

Status<UdpSocket> BindUdp(const std::shared_ptr<Registry>& reg, NetCounterSet* counters,
                          Endpoint local) {
  std::shared_ptr<UdpState> state;
  {
    std::lock_guard l(reg->lock);
    if (local.port == 0) {
      local.port = reg->FreePortLocked(reg->udp, local.addr);
      if (local.port == 0) {
        return MakeError(ErrorCode::kResourceExhausted,
                         "BindUdp: the loopback stack has no free port left; close sockets");
      }
    } else if (CollidesLocked(reg->udp, local)) {
      return std::unexpected(AddressInUseError(fmt::format("BindUdp {}", local.ToString())));
    }
    state = std::make_shared<UdpState>(local, reg->options.loopback_udp_queue_bytes);
    reg->udp.emplace(local, state);
  }
  return UdpSocket(std::make_unique<LoopbackUdp>(reg, std::move(state)), counters);
}

}  // namespace junction::net::loopback
