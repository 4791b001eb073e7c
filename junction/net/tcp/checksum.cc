// checksum.cc — RFC 1071 one's-complement sums for TCP over IPv4.
//
// Every 64-byte RPC over the dpdk stack sums four segments (two sent, two verified): these
// run on a round trip's path, so they are written for it. The body adds 64-bit words into a
// 128-bit accumulator (an add and an add-with-carry per word: the end-around carries are
// kept in the high half and folded once at the end), two words per step; the tail of under
// 8 bytes is read in 4-, 2- and 1-byte pieces rather than through a variable-length memcpy
// (a library call). Byte order: the data is summed as little-endian words, which RFC 1071
// section 2(B) allows: the folded sum comes out byte-swapped, and is stored back the same
// way.
#include <cstring>

#include "junction/net/tcp/tcp_io.h"

namespace junction::net::tcp {

namespace {
inline std::uint64_t Load64(const std::byte* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
// A 128-bit sum of 64-bit words folded to 32 bits, end-around carries included.
inline std::uint32_t Fold128(unsigned __int128 acc) {
  std::uint64_t s = static_cast<std::uint64_t>(acc);
  const std::uint64_t hi = static_cast<std::uint64_t>(acc >> 64);
  s += hi;
  if (s < hi) ++s;  // the carry out of this add goes around too
  s = (s & 0xFFFFFFFFu) + (s >> 32);
  s = (s & 0xFFFFFFFFu) + (s >> 32);
  return static_cast<std::uint32_t>(s);
}
}  // namespace

std::uint32_t ChecksumAdd(std::uint32_t sum, std::span<const std::byte> data) {
  const std::byte* p = data.data();
  std::size_t n = data.size();
  unsigned __int128 a = sum, b = 0;  // two chains: the adds of one word need not wait on the other's
  while (n >= 16) {
    a += Load64(p);
    b += Load64(p + 8);
    p += 16;
    n -= 16;
  }
  if (n >= 8) {
    a += Load64(p);
    p += 8;
    n -= 8;
  }
  // Under 8 bytes left, at an even offset from the start: each piece lands on 16-bit word
  // boundaries, where a value's place does not change its one's-complement sum.
  std::uint64_t tail = 0;
  if (n & 4) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    tail += w;
    p += 4;
  }
  if (n & 2) {
    std::uint16_t w;
    std::memcpy(&w, p, 2);
    tail += w;
    p += 2;
  }
  if (n & 1) tail += static_cast<std::uint8_t>(*p);  // the low byte of a last, half-filled word
  b += tail;
  return Fold128(a + b);
}

std::uint16_t ChecksumFold(std::uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

std::uint32_t PseudoHeaderSum(Ipv4Addr src, Ipv4Addr dst, std::size_t tcp_len) {
  // The pseudo-header's network-order bytes read as little-endian words, as the data is:
  // source and destination byte-swapped, then the zero byte and protocol 6 (0x0600 read so),
  // then the length, byte-swapped; folded to 32 bits with its carries.
  const std::uint64_t s = std::uint64_t{__builtin_bswap32(src.host_order())} +
                          __builtin_bswap32(dst.host_order()) + 0x0600u +
                          __builtin_bswap16(static_cast<std::uint16_t>(tcp_len));
  const std::uint64_t f = (s & 0xFFFFFFFFu) + (s >> 32);
  return static_cast<std::uint32_t>((f & 0xFFFFFFFFu) + (f >> 32));
}

bool TcpChecksumOk(Ipv4Addr src, Ipv4Addr dst, std::span<const std::byte> tcp) {
  return ChecksumFold(ChecksumAdd(PseudoHeaderSum(src, dst, tcp.size()), tcp)) == 0xFFFF;
}

}  // namespace junction::net::tcp
