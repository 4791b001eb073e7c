// url.h — the URLs the HTTP client reaches: http://IPV4[:PORT][/path][?query] and
// http://localhost[:PORT]/..., nothing that needs a resolver.
//
//   auto u = ParseHttpUrl("http://127.0.0.1:8080/function/echo?x=1");
//   u->endpoint    // 127.0.0.1:8080
//   u->host        // "127.0.0.1:8080" (the Host header: the authority as written)
//   u->target      // "/function/echo?x=1"
//
// The node has no DNS resolver and no TLS client, so https://, names other than localhost,
// IPv6 literals and user info are refused; the error says which and what to write instead.
// Never blocks, never allocates beyond the result.
#pragma once

#include <string>
#include <string_view>

#include "junction/base/error.h"
#include "junction/net/endpoint.h"

namespace junction::http {

struct HttpUrl {
  net::Endpoint endpoint;  // localhost is 127.0.0.1; port 80 unless given
  std::string host;        // the authority as written: the Host header
  std::string target;      // path and query; "/" when the URL has none; no fragment
};

// Errors (kInvalidArgument, naming the URL): not http://, https://, no host, a host that is
// not an IPv4 literal or localhost (no DNS), a port outside 1..65535, whitespace or control
// bytes, user info.
[[nodiscard]] Status<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace junction::http
