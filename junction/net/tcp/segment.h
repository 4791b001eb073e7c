// segment.h — TCP header parsing and building (RFC 9293 section 3.1), sequence arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace junction::net::tcp {

// Sequence-space comparisons modulo 2^32 (RFC 9293 section 3.4).
inline bool SeqLt(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) < 0; }
inline bool SeqLeq(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) <= 0; }
inline bool SeqGt(std::uint32_t a, std::uint32_t b) { return SeqLt(b, a); }
inline bool SeqGeq(std::uint32_t a, std::uint32_t b) { return SeqLeq(b, a); }

namespace flags {
inline constexpr std::uint8_t kFin = 0x01;
inline constexpr std::uint8_t kSyn = 0x02;
inline constexpr std::uint8_t kRst = 0x04;
inline constexpr std::uint8_t kPsh = 0x08;
inline constexpr std::uint8_t kAck = 0x10;
inline constexpr std::uint8_t kUrg = 0x20;
}  // namespace flags

inline constexpr std::size_t kHeaderBytes = 20;
inline constexpr std::size_t kMaxHeaderBytes = 60;

inline std::uint16_t Load16(const std::byte* p) {
  return static_cast<std::uint16_t>((std::to_integer<unsigned>(p[0]) << 8) | std::to_integer<unsigned>(p[1]));
}
inline std::uint32_t Load32(const std::byte* p) {
  return (std::uint32_t{Load16(p)} << 16) | Load16(p + 2);
}
inline void Store16(std::byte* p, std::uint16_t v) {
  p[0] = std::byte(v >> 8);
  p[1] = std::byte(v);
}
inline void Store32(std::byte* p, std::uint32_t v) {
  Store16(p, static_cast<std::uint16_t>(v >> 16));
  Store16(p + 2, static_cast<std::uint16_t>(v));
}

// A parsed segment: header fields in host order, options decoded, payload located.
struct Segment {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint32_t seq = 0;
  std::uint32_t ack = 0;
  std::uint8_t flags = 0;
  std::uint16_t window = 0;  // as on the wire (not yet scaled)
  // Options (meaningful on SYN segments).
  std::uint16_t mss = 0;     // 0: absent
  int wscale = -1;           // -1: absent; else 0..14 (larger values are clamped, RFC 7323 2.3)
  std::span<const std::byte> payload;

  bool has(std::uint8_t f) const { return (flags & f) != 0; }
  // SEG.LEN: payload plus one for each of SYN and FIN.
  std::uint32_t len() const {
    return static_cast<std::uint32_t>(payload.size()) + (has(flags::kSyn) ? 1 : 0) +
           (has(flags::kFin) ? 1 : 0);
  }
};

enum class ParseError { kOk, kTooShort, kBadDataOffset, kBadOption };

// Parses header, options and payload. `tcp` is the whole IPv4 payload.
ParseError ParseSegment(std::span<const std::byte> tcp, Segment* out);

// Writes a 20-byte header (checksum 0) plus `opt_len` bytes of options already at p + 20;
// returns the header length.
inline std::size_t WriteHeader(std::byte* p, std::uint16_t src_port, std::uint16_t dst_port,
                               std::uint32_t seq, std::uint32_t ack, std::uint8_t fl,
                               std::uint16_t window, std::size_t opt_len) {
  const std::size_t hl = kHeaderBytes + opt_len;
  Store16(p, src_port);
  Store16(p + 2, dst_port);
  Store32(p + 4, seq);
  Store32(p + 8, ack);
  p[12] = std::byte(static_cast<std::uint8_t>((hl / 4) << 4));
  p[13] = std::byte(fl);
  Store16(p + 14, window);
  Store16(p + 16, 0);
  Store16(p + 18, 0);
  return hl;
}

}  // namespace junction::net::tcp
