// socket_impl.h — what a backend implements behind TcpConn, TcpListener and UdpSocket.
//
// Backends (kernel, loopback, later dpdk) derive from these; users never see them. The
// value-type handles in socket.h own one impl each and add what every backend shares:
// argument checks, the closed-handle state, and the per-core counters. An impl's methods are
// called under the handle's contract (socket.h): at most one reader and one writer of a
// connection at a time; Close() only when no other uthread is inside Read/Write; the
// destructor after Close().
#pragma once

#include <cstddef>
#include <span>

#include "junction/base/error.h"
#include "junction/net/endpoint.h"
#include "junction/sched/tsc.h"

namespace junction::net {

using sched::Deadline;

class TcpConn;
struct Datagram;

class TcpConnImpl {
 public:
  virtual ~TcpConnImpl() = default;
  // buf is not empty. Blocks (parks) until at least one byte, EOF (0) or the deadline.
  virtual Status<std::size_t> Read(std::span<std::byte> buf, Deadline deadline) = 0;
  // buf is not empty. Returns when all of buf is queued for sending, or with an error.
  virtual Status<void> Write(std::span<const std::byte> buf, Deadline deadline) = 0;
  virtual Status<void> ShutdownWrite() = 0;
  virtual void Close() = 0;  // idempotent
  virtual Endpoint local_endpoint() const = 0;
  virtual Endpoint remote_endpoint() const = 0;
};

class TcpListenerImpl {
 public:
  virtual ~TcpListenerImpl() = default;
  virtual Status<TcpConn> Accept(Deadline deadline) = 0;
  virtual Endpoint local_endpoint() const = 0;
  // Idempotent; may run while other uthreads are inside Accept (they return kClosed).
  virtual void Close() = 0;
};

class UdpSocketImpl {
 public:
  virtual ~UdpSocketImpl() = default;
  virtual Status<void> SendTo(std::span<const std::byte> payload, Endpoint to,
                              Deadline deadline) = 0;
  virtual Status<Datagram> RecvFrom(std::span<std::byte> buf, Deadline deadline) = 0;
  virtual Endpoint local_endpoint() const = 0;
  virtual void Close() = 0;  // idempotent
};

}  // namespace junction::net
