// callback_client.cc — the HTTP/1.1 client of async callbacks.
#include "faasd-shim/async/callback_client.h"

#include <fmt/format.h>


#include "junction/http/client/url.h"
#include "junction/http/headers.h"
#include "junction/http/request_writer.h"
#include "junction/http/response_parser.h"

namespace faasnode::async {

using junction::ErrorCode;
using junction::MakeError;

junction::Status<CallbackUrl> ParseCallbackUrl(std::string_view url) {
  // The node's HTTP client reaches the same URLs; only the error names the header it came from.
  auto u = junction::http::ParseHttpUrl(url);
  if (!u) {
    std::string_view message = u.error().message();
    if (message.starts_with("URL ")) message.remove_prefix(4);
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("X-Callback-Url {}", message));
  }
  return CallbackUrl{.endpoint = u->endpoint, .host = std::move(u->host), .target = std::move(u->target)};
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
