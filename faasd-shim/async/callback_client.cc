// callback_client.cc — the HTTP/1.1 client of async callbacks.
#include "faasd-shim/async/callback_client.h"

#include <fmt/format.h>

#include <charconv>

#include "junction/http/headers.h"
#include "junction/http/request_writer.h"
#include "junction/http/response_parser.h"

namespace faasnode::async {

using junction::ErrorCode;
using junction::MakeError;

junction::Status<CallbackUrl> ParseCallbackUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return MakeError(ErrorCode::kInvalidArgument,
                                     fmt::format("X-Callback-Url \"{}\": {}; give http://IPV4[:PORT][/path] or "
                                                 "http://localhost[:PORT][/path]",
                                                 url, why));
  };
  constexpr std::string_view kScheme = "http://";
  if (url.size() < kScheme.size() || !junction::http::EqualsIgnoreCase(url.substr(0, kScheme.size()), kScheme)) {
    return bad(url.starts_with("https://") ? "https is not supported (the node has no TLS client)"
                                           : "only http:// URLs are supported");
  }
  for (const char c : url) {
    if (c == ' ' || c == '\r' || c == '\n' || c == '\t' || c == '\0') return bad("the URL holds whitespace");
  }
  std::string_view rest = url.substr(kScheme.size());
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const std::size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  std::string target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (target.front() == '?') target.insert(0, "/");
  if (authority.find('@') != std::string_view::npos) return bad("user info in the URL is not supported");
  if (authority.empty()) return bad("the URL has no host");
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
  const std::string ip = junction::http::EqualsIgnoreCase(host, "localhost") ? "127.0.0.1" : std::string(host);
  auto ep = junction::net::Endpoint::Parse(fmt::format("{}:{}", ip, port));
  if (!ep) return bad("the host is not an IPv4 address or localhost (the node has no DNS resolver)");
  return CallbackUrl{.endpoint = *ep, .host = std::string(authority), .target = std::move(target)};
}

junction::Status<int> PostCallback(junction::net::Stack& stack, const CallbackUrl& url, const HeaderList& headers,
                                   std::string_view body, junction::sched::Deadline deadline) {
  std::string out;
  junction::http::RequestWriter w(out);
  if (auto s = w.Start(junction::http::Method::kPost, url.target); !s) return std::unexpected(s.error());
  (void)w.AddHeader("Host", url.host);
  for (const auto& [k, v] : headers) {
    if (junction::http::EqualsIgnoreCase(k, "Host")) continue;
    (void)w.AddHeader(k, v);  // framing fields and bad values are refused by the writer: skipped
  }
  w.SetClose();
  w.Finish(body);
  auto conn = stack.Connect(url.endpoint, deadline);
  if (!conn) {
    return MakeError(conn.error().code(),
                     fmt::format("connecting to {}: {}", url.endpoint.ToString(), conn.error().message()));
  }
  if (auto s = conn->Write(std::as_bytes(std::span(out.data(), out.size())), deadline); !s) {
    return std::unexpected(s.error());
  }
  junction::http::ResponseParser parser;
  parser.ExpectResponseTo(junction::http::Method::kPost);
  while (true) {
    auto r = parser.Next();
    if (!r) return std::unexpected(r.error());
    if (*r != nullptr) {
      if ((*r)->is_interim()) continue;
      return (*r)->status;
    }
    std::span<char> space = parser.WritableSpace(4096);
    auto n = conn->Read(std::as_writable_bytes(space), deadline);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) {
      parser.Commit(0);
      auto last = parser.FinishAtEof();
      if (!last) return std::unexpected(last.error());
      if (*last == nullptr || (*last)->is_interim()) {
        return MakeError(ErrorCode::kIo,
                         fmt::format("{} closed the connection without a response", url.endpoint.ToString()));
      }
      return (*last)->status;
    }
    parser.Commit(*n);
  }
}

}  // namespace faasnode::async
