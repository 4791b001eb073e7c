// endpoint.h — IPv4 addresses and (address, port) endpoints: parsing and printing.
//
// Plain values, cheap to copy, safe to use from any thread. Parsing never throws: a malformed
// string gives kInvalidArgument with a message that quotes it and says the expected form.
//
//   auto ep = Endpoint::Parse("127.0.0.1:8080");
//   if (!ep) return std::unexpected(ep.error());
//   fmt::print("{}\n", ep->ToString());   // 127.0.0.1:8080
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "junction/base/error.h"

namespace junction::net {

// An IPv4 address, held in host byte order (1.2.3.4 is 0x01020304).
class Ipv4Addr {
 public:
  constexpr Ipv4Addr() = default;
  constexpr explicit Ipv4Addr(std::uint32_t host_order) : addr_(host_order) {}
  constexpr Ipv4Addr(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d)
      : addr_((std::uint32_t{a} << 24) | (std::uint32_t{b} << 16) | (std::uint32_t{c} << 8) | d) {}

  // Dotted quad, exactly four decimal parts 0..255 without leading '+' or spaces.
  static Status<Ipv4Addr> Parse(std::string_view text);
  static constexpr Ipv4Addr Any() { return Ipv4Addr(0u); }
  static constexpr Ipv4Addr Loopback() { return Ipv4Addr(127, 0, 0, 1); }

  constexpr std::uint32_t host_order() const { return addr_; }
  constexpr bool is_any() const { return addr_ == 0; }
  std::string ToString() const;

  constexpr auto operator<=>(const Ipv4Addr&) const = default;

 private:
  std::uint32_t addr_ = 0;
};

// An IPv4 address and a TCP/UDP port (host byte order). Port 0 asks the stack to choose.
struct Endpoint {
  Ipv4Addr addr;
  std::uint16_t port = 0;

  // "a.b.c.d:port" with port 0..65535.
  static Status<Endpoint> Parse(std::string_view text);
  std::string ToString() const;

  constexpr auto operator<=>(const Endpoint&) const = default;
};

}  // namespace junction::net
