// kernel_socket.h — small helpers the kernel backend's TCP and UDP files share (internal).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include "junction/base/error.h"
#include "junction/net/endpoint.h"

namespace junction::net::kernel {

sockaddr_in ToSockaddr(Endpoint ep);
Endpoint FromSockaddr(const sockaddr_in& sa);
// getsockname / getpeername as an Endpoint (a default Endpoint when the call fails).
Endpoint LocalEndpointOf(int fd);
Endpoint RemoteEndpointOf(int fd);

// Owns a file descriptor: closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

}  // namespace junction::net::kernel
