// segment.cc — TCP header and option parsing (RFC 9293 section 3.1, RFC 7323 section 2).
#include "junction/net/tcp/segment.h"

namespace junction::net::tcp {

ParseError ParseSegment(std::span<const std::byte> tcp, Segment* out) {
  if (tcp.size() < kHeaderBytes) return ParseError::kTooShort;
  const std::byte* p = tcp.data();
  const std::size_t hl = (std::to_integer<unsigned>(p[12]) >> 4) * 4u;
  if (hl < kHeaderBytes || hl > tcp.size()) return ParseError::kBadDataOffset;
  out->src_port = Load16(p);
  out->dst_port = Load16(p + 2);
  out->seq = Load32(p + 4);
  out->ack = Load32(p + 8);
  out->flags = std::to_integer<std::uint8_t>(p[13]) & 0x3F;
  out->window = Load16(p + 14);
  out->mss = 0;
  out->wscale = -1;
  // Options: kind 0 ends, 1 is a pad, others are kind, length (>= 2), data.
  std::size_t i = kHeaderBytes;
  while (i < hl) {
    const unsigned kind = std::to_integer<unsigned>(p[i]);
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= hl) return ParseError::kBadOption;
    const unsigned olen = std::to_integer<unsigned>(p[i + 1]);
    if (olen < 2 || i + olen > hl) return ParseError::kBadOption;
    if (kind == 2 && olen == 4) {
      out->mss = Load16(p + i + 2);
    } else if (kind == 3 && olen == 3) {
      const int ws = std::to_integer<int>(p[i + 2]);
      out->wscale = ws > 14 ? 14 : ws;
    }
    i += olen;
  }
  out->payload = tcp.subspan(hl);
  return ParseError::kOk;
}

}  // namespace junction::net::tcp
