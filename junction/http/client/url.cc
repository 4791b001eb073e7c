// url.cc — parsing the client's http:// URLs (no resolver: IPv4 literals and localhost).
#include "junction/http/client/url.h"

#include <fmt/format.h>

#include <charconv>

#include "junction/http/headers.h"

namespace junction::http {

Status<HttpUrl> ParseHttpUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("URL \"{}\": {}; give http://IPV4[:PORT][/path] or http://localhost[:PORT][/path]",
                                 url, why));
  };
  constexpr std::string_view kScheme = "http://";
  if (url.size() < kScheme.size() || !EqualsIgnoreCase(url.substr(0, kScheme.size()), kScheme)) {
    return bad(url.size() >= 8 && EqualsIgnoreCase(url.substr(0, 8), "https://")
                   ? "https is not supported (the node has no TLS client)"
                   : "only http:// URLs are supported");
  }
  for (const char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return bad("the URL holds whitespace or control bytes");
  }
  std::string_view rest = url.substr(kScheme.size());
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const std::size_t slash = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, slash);
  std::string target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (target.front() == '?') target.insert(0, "/");
  if (authority.find('@') != std::string_view::npos) return bad("user info in the URL is not supported");
  if (authority.empty()) return bad("the URL has no host");
  if (authority.front() == '[') return bad("IPv6 addresses are not supported");
  std::string_view host = authority;
  std::uint16_t port = 80;
  if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    const std::string_view p = authority.substr(colon + 1);
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || v == 0 || v > 65535) {
      return bad("the port is not a number from 1 to 65535");
    }
    port = static_cast<std::uint16_t>(v);
  }
  if (host.empty()) return bad("the URL has no host");
  const std::string ip = EqualsIgnoreCase(host, "localhost") ? "127.0.0.1" : std::string(host);
  auto ep = net::Endpoint::Parse(fmt::format("{}:{}", ip, port));
  if (!ep) {
    return bad(fmt::format("host \"{}\" is not an IPv4 address or localhost (the node has no DNS resolver)", host));
  }
  return HttpUrl{.endpoint = *ep, .host = std::string(authority), .target = std::move(target)};
}

}  // namespace junction::http
