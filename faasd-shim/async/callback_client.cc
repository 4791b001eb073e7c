// callback_client.cc — the HTTP/1.1 client of async callbacks.
#include "faasd-shim/async/callback_client.h"

#include <fmt/format.h>


#include "junction/http/client/client.h"
#include "junction/http/client/url.h"
#include "junction/http/headers.h"

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

junction::Status<int> PostCallback(junction::net::Stack& stack, std::string_view url, const HeaderList& headers,
                                   std::string_view body, junction::sched::Deadline deadline) {
  // The client refuses a bad field rather than skip it; a callback carries the function's own
  // headers, so those the writer would refuse (framing fields, bad names or values) are
  // dropped here, as the callback's contract says.
  std::vector<junction::http::Header> fields;
  fields.reserve(headers.size());
  for (const auto& [k, v] : headers) {
    const bool framing = junction::http::EqualsIgnoreCase(k, "Content-Length") ||
                         junction::http::EqualsIgnoreCase(k, "Transfer-Encoding") ||
                         junction::http::EqualsIgnoreCase(k, "Connection");
    if (framing || !junction::http::IsToken(k) || !junction::http::IsValidFieldValue(v)) continue;
    fields.push_back({k, v});
  }
  junction::http::Client client(&stack, {.keep_alive = false});
  auto r = client.Do({.method = junction::http::Method::kPost, .url = url, .headers = fields, .body = body,
                      .deadline = deadline});
  if (!r) return std::unexpected(r.error());
  return r->status;
}

}  // namespace faasnode::async
