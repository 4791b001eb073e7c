// kernel_socket.cc — sockaddr conversions and the fd owner of the kernel backend.
#include "junction/net/kernel_socket.h"

#include <arpa/inet.h>
#include <unistd.h>

namespace junction::net::kernel {

sockaddr_in ToSockaddr(Endpoint ep) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(ep.port);
  sa.sin_addr.s_addr = htonl(ep.addr.host_order());
  return sa;
}

Endpoint FromSockaddr(const sockaddr_in& sa) {
  return Endpoint{Ipv4Addr(ntohl(sa.sin_addr.s_addr)), ntohs(sa.sin_port)};
}

Endpoint LocalEndpointOf(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return {};
  return FromSockaddr(sa);
}

Endpoint RemoteEndpointOf(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return {};
  return FromSockaddr(sa);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace junction::net::kernel
