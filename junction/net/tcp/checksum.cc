// checksum.cc — RFC 1071 one's-complement sums for TCP over IPv4.
#include <cstring>

#include "junction/net/tcp/tcp_io.h"

namespace junction::net::tcp {

std::uint32_t ChecksumAdd(std::uint32_t sum, std::span<const std::byte> data) {
  std::uint64_t s = sum;
  const std::byte* p = data.data();
  std::size_t n = data.size();
  while (n >= 8) {  // 64-bit loads; byte order folds out (RFC 1071 section 2.B)
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    s += (w & 0xFFFFFFFFu) + (w >> 32);
    p += 8;
    n -= 8;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  s += (tail & 0xFFFFFFFFu) + (tail >> 32);
  // The sum is in the machine's (little-endian) order of 16-bit words; fold to 32 bits.
  while (s >> 32) s = (s & 0xFFFFFFFFu) + (s >> 32);
  return static_cast<std::uint32_t>(s);
}

std::uint16_t ChecksumFold(std::uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

std::uint32_t PseudoHeaderSum(Ipv4Addr src, Ipv4Addr dst, std::size_t tcp_len) {
  // Network-order bytes of the pseudo-header, summed like the data (little-endian words).
  std::byte ph[12];
  const std::uint32_t s = src.host_order(), d = dst.host_order();
  const std::uint8_t b[12] = {std::uint8_t(s >> 24), std::uint8_t(s >> 16), std::uint8_t(s >> 8),
                              std::uint8_t(s),       std::uint8_t(d >> 24), std::uint8_t(d >> 16),
                              std::uint8_t(d >> 8),  std::uint8_t(d),       0,
                              6,                     std::uint8_t(tcp_len >> 8),
                              std::uint8_t(tcp_len)};
  std::memcpy(ph, b, 12);
  return ChecksumAdd(0, ph);
}

bool TcpChecksumOk(Ipv4Addr src, Ipv4Addr dst, std::span<const std::byte> tcp) {
  return ChecksumFold(ChecksumAdd(PseudoHeaderSum(src, dst, tcp.size()), tcp)) == 0xFFFF;
}

}  // namespace junction::net::tcp
