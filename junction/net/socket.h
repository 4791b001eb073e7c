// socket.h — the socket API for uthreads: TcpConn, TcpListener and UdpSocket handles.
//
// Value types in the Seastar style: each handle is move-only and owns one backend impl (kernel,
// loopback, later dpdk; see stack.h for how to get one). Every operation is called from a
// uthread; a blocking one parks the uthread (its core runs others), never the kthread, and
// takes a Deadline (Deadline::max() = none). Failures are results, never exceptions; see
// net_error.h for the table of codes (refused, reset, timed out, closed, address in use).
//
//   auto conn = stack->Connect(*Endpoint::Parse("127.0.0.1:8080"), Clock::now() + 1s);
//   if (!conn) return std::unexpected(conn.error());
//   if (auto w = conn->Write(std::as_bytes(std::span(req))); !w) ...
//   std::array<std::byte, 4096> buf;
//   auto n = conn->Read(buf, Clock::now() + 1s);   // 0: the peer finished sending (EOF)
//
// Threading: a handle may be used from uthreads on any core. A TcpConn may be read by one
// uthread while another writes; two concurrent readers (or writers) are not allowed and the
// second one gets kInvalidArgument where a backend can tell. Close() and the destructor must
// not run while another uthread is inside Read/Write of the same handle (TcpListener::Close is
// the exception: it wakes blocked Accepts). Handles must be closed before their Stack is
// destroyed. The data path (Read/Write/SendTo/RecvFrom) allocates nothing and does not log.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "junction/base/error.h"
#include "junction/net/counters.h"
#include "junction/net/endpoint.h"
#include "junction/net/socket_impl.h"
#include "junction/sched/tsc.h"

namespace junction::net {

using sched::Clock;
using sched::Deadline;

// A connected TCP stream.
class TcpConn {
 public:
  TcpConn() = default;  // an empty (closed) handle
  // For backends: takes ownership of impl; counts into *counters (must outlive the handle).
  TcpConn(std::unique_ptr<TcpConnImpl> impl, NetCounterSet* counters);
  TcpConn(TcpConn&&) noexcept;
  TcpConn& operator=(TcpConn&&) noexcept;  // closes what it held first
  ~TcpConn();                              // closes

  // Reads up to buf.size() (> 0) bytes; parks until at least one byte is there. Returns the
  // number read, or 0 at end of stream (the peer shut down its write side or closed cleanly).
  // Errors: kTimedOut (deadline; nothing was consumed, the conn stays usable), reset (peer
  // aborted), kClosed (this handle was closed), kInvalidArgument (empty buf, second reader).
  Status<std::size_t> Read(std::span<std::byte> buf, Deadline deadline = Deadline::max());
  // Reads exactly buf.size() bytes. Errors as Read, plus kClosed when the stream ends first
  // (the message says how many bytes came); on error an unknown prefix of buf is filled.
  Status<void> ReadExactly(std::span<std::byte> buf, Deadline deadline = Deadline::max());
  // Writes all of buf, parking while the send buffer is full. Errors: kTimedOut (a prefix may
  // have been sent: close the conn), reset or broken pipe (the peer is gone), kClosed (this
  // handle was closed or ShutdownWrite was called), kInvalidArgument (second writer).
  // An empty buf is a no-op.
  Status<void> Write(std::span<const std::byte> buf, Deadline deadline = Deadline::max());
  // Sends end-of-stream (FIN) after what was written; reading stays possible. Idempotent.
  Status<void> ShutdownWrite();
  // Releases the connection; later calls fail with kClosed. Idempotent, never blocks. If data
  // sent by the peer is still unread the peer sees a reset (as TCP does), otherwise an orderly
  // end of stream.
  void Close();

  bool is_open() const { return impl_ != nullptr; }
  // Valid only while open (default Endpoint otherwise).
  Endpoint local_endpoint() const;
  Endpoint remote_endpoint() const;

 private:
  std::unique_ptr<TcpConnImpl> impl_;
  NetCounterSet* counters_ = nullptr;
};

// A listening TCP socket.
class TcpListener {
 public:
  TcpListener() = default;
  TcpListener(std::unique_ptr<TcpListenerImpl> impl, NetCounterSet* counters);
  TcpListener(TcpListener&&) noexcept;
  TcpListener& operator=(TcpListener&&) noexcept;
  ~TcpListener();

  // Parks until a connection arrives. Many uthreads may Accept on one listener at once.
  // Errors: kTimedOut, kClosed (the listener was closed, also while parked here).
  Status<TcpConn> Accept(Deadline deadline = Deadline::max());
  // Stops listening and wakes every parked Accept. Safe while others are inside Accept (but
  // not concurrently with the destructor). Idempotent.
  void Close();

  bool is_open() const { return impl_ != nullptr; }
  // The bound address; the real port when Listen was asked for port 0.
  Endpoint local_endpoint() const;

 private:
  std::unique_ptr<TcpListenerImpl> impl_;
  NetCounterSet* counters_ = nullptr;
};

// What UdpSocket::RecvFrom received.
struct Datagram {
  std::size_t size = 0;    // bytes stored in the caller's buffer
  Endpoint from;           // the sender
  bool truncated = false;  // the datagram was longer than the buffer; the rest is lost
};

// A bound UDP socket.
class UdpSocket {
 public:
  UdpSocket() = default;
  UdpSocket(std::unique_ptr<UdpSocketImpl> impl, NetCounterSet* counters);
  UdpSocket(UdpSocket&&) noexcept;
  UdpSocket& operator=(UdpSocket&&) noexcept;
  ~UdpSocket();

  // Sends one datagram (at most 65507 bytes). Parks only while the send buffer is full.
  // Errors: kInvalidArgument (too big, port 0), kTimedOut, kClosed. A datagram to an address
  // where nothing listens is lost without an error, as UDP does.
  Status<void> SendTo(std::span<const std::byte> payload, Endpoint to,
                      Deadline deadline = Deadline::max());
  // Parks until a datagram arrives. Errors: kTimedOut, kClosed, kInvalidArgument (empty buf).
  Status<Datagram> RecvFrom(std::span<std::byte> buf, Deadline deadline = Deadline::max());
  void Close();

  bool is_open() const { return impl_ != nullptr; }
  Endpoint local_endpoint() const;

 private:
  std::unique_ptr<UdpSocketImpl> impl_;
  NetCounterSet* counters_ = nullptr;
};

// The largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP).
inline constexpr std::size_t kMaxUdpPayload = 65507;

}  // namespace junction::net
