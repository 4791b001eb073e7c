// endpoint.cc — parsing and printing of Ipv4Addr and Endpoint.
#include "junction/net/endpoint.h"

#include <fmt/format.h>

#include <charconv>

namespace junction::net {
namespace {

// A decimal number in [0, max] spelt with digits only (no sign, no spaces, 1..5 digits).
bool ParseDecimal(std::string_view s, std::uint32_t max, std::uint32_t* out) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  std::uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

Status<Ipv4Addr> Ipv4Addr::Parse(std::string_view text) {
  std::uint32_t addr = 0;
  std::string_view rest = text;
  for (int i = 0; i < 4; ++i) {
    const std::size_t dot = rest.find('.');
    const bool last = i == 3;
    if (last != (dot == std::string_view::npos)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("'{}' is not an IPv4 address: expected four dot-separated "
                                   "numbers such as 127.0.0.1",
                                   text));
    }
    std::string_view part = last ? rest : rest.substr(0, dot);
    std::uint32_t v = 0;
    if (!ParseDecimal(part, 255, &v)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("'{}' is not an IPv4 address: part '{}' is not a number "
                                   "from 0 to 255",
                                   text, part));
    }
    addr = (addr << 8) | v;
    if (!last) rest.remove_prefix(dot + 1);
  }
  return Ipv4Addr(addr);
}

std::string Ipv4Addr::ToString() const {
  return fmt::format("{}.{}.{}.{}", addr_ >> 24, (addr_ >> 16) & 0xff, (addr_ >> 8) & 0xff,
                     addr_ & 0xff);
}

Status<Endpoint> Endpoint::Parse(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' is not an endpoint: expected ADDRESS:PORT such as "
                                 "127.0.0.1:8080",
                                 text));
  }
  auto addr = Ipv4Addr::Parse(text.substr(0, colon));
  if (!addr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' is not an endpoint: {}", text, addr.error().message()));
  }
  std::uint32_t port = 0;
  if (!ParseDecimal(text.substr(colon + 1), 65535, &port)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' is not an endpoint: the port '{}' is not a number from 0 "
                                 "to 65535",
                                 text, text.substr(colon + 1)));
  }
  return Endpoint{*addr, static_cast<std::uint16_t>(port)};
}

std::string Endpoint::ToString() const {
  return fmt::format("{}:{}", addr.ToString(), port);
}

}  // namespace junction::net
