// socket.cc — the value-type handles: closed-handle checks and counting over a backend impl.
#include "junction/net/socket.h"

#include <fmt/format.h>

#include <utility>

#include "junction/net/net_error.h"

namespace junction::net {
namespace {

// Counts a failed operation: timeouts apart from other errors. kClosed is this side's own
// doing (a closed handle, a listener closed under a parked Accept) and is not counted.
void CountError(NetCounterSet* counters, const Error& e) {
  if (counters == nullptr || e.code() == ErrorCode::kClosed) return;
  counters->Add(e.code() == ErrorCode::kTimedOut ? Counter::kTimeouts : Counter::kErrors);
}

}  // namespace

// --- TcpConn ---------------------------------------------------------------------------------

TcpConn::TcpConn(std::unique_ptr<TcpConnImpl> impl, NetCounterSet* counters)
    : impl_(std::move(impl)), counters_(counters) {}
TcpConn::TcpConn(TcpConn&& o) noexcept
    : impl_(std::move(o.impl_)), counters_(std::exchange(o.counters_, nullptr)) {}
TcpConn& TcpConn::operator=(TcpConn&& o) noexcept {
  if (this != &o) {
    Close();
    impl_ = std::move(o.impl_);
    counters_ = std::exchange(o.counters_, nullptr);
  }
  return *this;
}
TcpConn::~TcpConn() {
  Close();
}

Status<std::size_t> TcpConn::Read(std::span<std::byte> buf, Deadline deadline) {
  if (impl_ == nullptr) return std::unexpected(ClosedError("TcpConn::Read"));
  if (buf.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "TcpConn::Read: the buffer is empty (0 would read as end of stream); pass "
                     "at least one byte of room");
  }
  auto n = impl_->Read(buf, deadline);
  if (!n) {
    CountError(counters_, n.error());
  } else {
    counters_->Add(Counter::kBytesIn, *n);
  }
  return n;
}

Status<void> TcpConn::ReadExactly(std::span<std::byte> buf, Deadline deadline) {
  std::size_t got = 0;
  while (got < buf.size()) {
    auto n = Read(buf.subspan(got), deadline);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) {
      return MakeError(ErrorCode::kClosed,
                       fmt::format("TcpConn::ReadExactly: the peer ended the stream after {} of "
                                   "{} bytes",
                                   got, buf.size()));
    }
    got += *n;
  }
  return {};
}

Status<void> TcpConn::Write(std::span<const std::byte> buf, Deadline deadline) {
  if (impl_ == nullptr) return std::unexpected(ClosedError("TcpConn::Write"));
  if (buf.empty()) return {};
  auto w = impl_->Write(buf, deadline);
  if (!w) {
    CountError(counters_, w.error());
  } else {
    counters_->Add(Counter::kBytesOut, buf.size());
  }
  return w;
}

Status<void> TcpConn::ShutdownWrite() {
  if (impl_ == nullptr) return std::unexpected(ClosedError("TcpConn::ShutdownWrite"));
  return impl_->ShutdownWrite();
}

void TcpConn::Close() {
  if (impl_ == nullptr) return;
  impl_->Close();
  impl_.reset();
}

Endpoint TcpConn::local_endpoint() const {
  return impl_ ? impl_->local_endpoint() : Endpoint{};
}
Endpoint TcpConn::remote_endpoint() const {
  return impl_ ? impl_->remote_endpoint() : Endpoint{};
}

// --- TcpListener -----------------------------------------------------------------------------

TcpListener::TcpListener(std::unique_ptr<TcpListenerImpl> impl, NetCounterSet* counters)
    : impl_(std::move(impl)), counters_(counters) {}
TcpListener::TcpListener(TcpListener&& o) noexcept
    : impl_(std::move(o.impl_)), counters_(std::exchange(o.counters_, nullptr)) {}
TcpListener& TcpListener::operator=(TcpListener&& o) noexcept {
  if (this != &o) {
    if (impl_) impl_->Close();
    impl_ = std::move(o.impl_);
    counters_ = std::exchange(o.counters_, nullptr);
  }
  return *this;
}
TcpListener::~TcpListener() {
  if (impl_) impl_->Close();
}

Status<TcpConn> TcpListener::Accept(Deadline deadline) {
  if (impl_ == nullptr) return std::unexpected(ClosedError("TcpListener::Accept"));
  auto c = impl_->Accept(deadline);
  if (!c) {
    CountError(counters_, c.error());
  } else {
    counters_->Add(Counter::kConnsAccepted);
  }
  return c;
}

void TcpListener::Close() {
  if (impl_) impl_->Close();
}

Endpoint TcpListener::local_endpoint() const {
  return impl_ ? impl_->local_endpoint() : Endpoint{};
}

// --- UdpSocket -------------------------------------------------------------------------------

UdpSocket::UdpSocket(std::unique_ptr<UdpSocketImpl> impl, NetCounterSet* counters)
    : impl_(std::move(impl)), counters_(counters) {}
UdpSocket::UdpSocket(UdpSocket&& o) noexcept
    : impl_(std::move(o.impl_)), counters_(std::exchange(o.counters_, nullptr)) {}
UdpSocket& UdpSocket::operator=(UdpSocket&& o) noexcept {
  if (this != &o) {
    Close();
    impl_ = std::move(o.impl_);
    counters_ = std::exchange(o.counters_, nullptr);
  }
  return *this;
}
UdpSocket::~UdpSocket() {
  Close();
}

Status<void> UdpSocket::SendTo(std::span<const std::byte> payload, Endpoint to, Deadline deadline) {
  if (impl_ == nullptr) return std::unexpected(ClosedError("UdpSocket::SendTo"));
  if (payload.size() > kMaxUdpPayload || to.port == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("UdpSocket::SendTo {}: a datagram holds 0..{} bytes (got {}) "
                                 "and needs a non-zero port",
                                 to.ToString(), kMaxUdpPayload, payload.size()));
  }
  auto s = impl_->SendTo(payload, to, deadline);
  if (!s) {
    CountError(counters_, s.error());
  } else {
    counters_->Add(Counter::kDatagramsOut);
    counters_->Add(Counter::kBytesOut, payload.size());
  }
  return s;
}

Status<Datagram> UdpSocket::RecvFrom(std::span<std::byte> buf, Deadline deadline) {
  if (impl_ == nullptr) return std::unexpected(ClosedError("UdpSocket::RecvFrom"));
  if (buf.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "UdpSocket::RecvFrom: the buffer is empty; pass room for the datagram");
  }
  auto d = impl_->RecvFrom(buf, deadline);
  if (!d) {
    CountError(counters_, d.error());
  } else {
    counters_->Add(Counter::kDatagramsIn);
    counters_->Add(Counter::kBytesIn, d->size);
  }
  return d;
}

void UdpSocket::Close() {
  if (impl_ == nullptr) return;
  impl_->Close();
  impl_.reset();
}

Endpoint UdpSocket::local_endpoint() const {
  return impl_ ? impl_->local_endpoint() : Endpoint{};
}

}  // namespace junction::net
