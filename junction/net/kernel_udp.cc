// kernel_udp.cc — kernel-backend UDP: one non-blocking socket, parked on EAGAIN like TCP.
#include "junction/net/kernel_udp.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>

#include "junction/net/io_waiter.h"
#include "junction/net/kernel_socket.h"
#include "junction/net/net_error.h"

namespace junction::net::kernel {
namespace {

struct UdpTarget final : PollTarget {
  explicit UdpTarget(int f) : fd(f) {}
  void OnEvents(std::uint32_t ev) override {
    if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) rd.Notify();
    if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) wr.Notify();
  }
  int fd;
  alignas(64) IoWaiter rd;
  alignas(64) IoWaiter wr;
};

class KernelUdp final : public UdpSocketImpl {
 public:
  KernelUdp(UdpTarget* t, CorePoller* poller, Endpoint local)
      : t_(t), poller_(poller), local_(local) {}
  ~KernelUdp() override { Close(); }

  Status<void> SendTo(std::span<const std::byte> payload, Endpoint to, Deadline deadline) override {
    const sockaddr_in sa = ToSockaddr(to);
    for (;;) {
      const std::uint64_t seen = t_->wr.epoch();
      const ssize_t n = ::sendto(t_->fd, payload.data(), payload.size(), MSG_NOSIGNAL,
                                 reinterpret_cast<const sockaddr*>(&sa), sizeof(sa));
      if (n >= 0) return {};
      const int e = errno;
      if (e == EINTR) continue;
      if (e == ECONNREFUSED) return {};  // an ICMP error from an earlier datagram: UDP drops
      if (e != EAGAIN && e != EWOULDBLOCK) {
        return std::unexpected(OsError(What("SendTo", to), e));
      }
      if (auto s = Park(t_->wr, seen, deadline, "SendTo"); !s) return std::unexpected(s.error());
    }
  }

  Status<Datagram> RecvFrom(std::span<std::byte> buf, Deadline deadline) override {
    for (;;) {
      const std::uint64_t seen = t_->rd.epoch();
      sockaddr_in sa{};
      socklen_t len = sizeof(sa);
      // MSG_TRUNC: the return value is the datagram's real length.
      const ssize_t n = ::recvfrom(t_->fd, buf.data(), buf.size(), MSG_TRUNC,
                                   reinterpret_cast<sockaddr*>(&sa), &len);
      if (n >= 0) {
        Datagram d;
        d.size =
            static_cast<std::size_t>(n) < buf.size() ? static_cast<std::size_t>(n) : buf.size();
        d.truncated = static_cast<std::size_t>(n) > buf.size();
        d.from = FromSockaddr(sa);
        return d;
      }
      const int e = errno;
      if (e == EINTR || e == ECONNREFUSED) continue;
      if (e != EAGAIN && e != EWOULDBLOCK) {
        return std::unexpected(OsError(What("RecvFrom", local_), e));
      }
      if (auto s = Park(t_->rd, seen, deadline, "RecvFrom"); !s) return std::unexpected(s.error());
    }
  }

  Endpoint local_endpoint() const override { return local_; }

  void Close() override {
    if (t_ == nullptr) return;
    poller_->Remove(t_->fd);
    ::close(t_->fd);
    poller_->Retire(t_);
    t_ = nullptr;
  }

 private:
  std::string What(const char* op, Endpoint ep) const {
    return fmt::format("UdpSocket::{} {} (bound to {})", op, ep.ToString(), local_.ToString());
  }
  Status<void> Park(IoWaiter& w, std::uint64_t seen, Deadline deadline, const char* op) {
    switch (w.Wait(seen, deadline)) {
      case IoWaiter::kReady:
        return {};
      case IoWaiter::kTimedOut:
        return std::unexpected(TimedOutError(What(op, local_)));
      case IoWaiter::kBusy:
        return MakeError(ErrorCode::kInvalidArgument,
                         What(op, local_) +
                             ": another uthread is already waiting in this "
                             "direction; use one sender and one receiver");
    }
    return {};
  }

  UdpTarget* t_;
  CorePoller* poller_;
  Endpoint local_;
};

}  // namespace

Status<UdpSocket> BindUdp(KernelStack& stack, Endpoint local) {
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return std::unexpected(Error::FromErrno("BindUdp: socket"));
  const sockaddr_in sa = ToSockaddr(local);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0) {
    return std::unexpected(OsError(fmt::format("BindUdp {}", local.ToString()), errno));
  }
  const Endpoint bound = LocalEndpointOf(fd.get());
  CorePoller& poller = stack.local_poller();
  auto* target = new UdpTarget(fd.get());
  if (auto s = poller.Add(fd.get(), EPOLLIN | EPOLLOUT, target); !s) {
    delete target;
    return std::unexpected(s.error());
  }
  fd.release();
  return UdpSocket(std::make_unique<KernelUdp>(target, &poller, bound),
                   stack.counters_for_sockets());
}

}  // namespace junction::net::kernel
