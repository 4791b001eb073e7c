// router.cc — exact and prefix routes, and the JSON error reply.
#include "faasd-shim/api/router.h"

#include <algorithm>

#include "faasd-shim/api/system_common.h"
#include "junction/http/json_error.h"

namespace faasnode::api {

void ErrorReply(Reply& reply, int status, std::string_view message) {
  reply.status = status;
  reply.headers.clear();
  reply.headers.emplace_back("Content-Type", "application/json");
  reply.body.clear();
  junction::http::AppendJsonError(reply.body, message);
}

void Router::Exact(std::string path, RouteHandler handler) {
  exact_.emplace_back(std::move(path), std::move(handler));
}

void Router::Prefix(std::string prefix, RouteHandler handler) {
  prefixes_.emplace_back(std::move(prefix), std::move(handler));
  std::stable_sort(prefixes_.begin(), prefixes_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

void Router::Dispatch(const Request& req, Reply& reply) const {
  for (const auto& [path, handler] : exact_) {
    if (req.path == path) {
      handler(req, {}, reply);
      return;
    }
  }
  for (const auto& [prefix, handler] : prefixes_) {
    if (req.path.starts_with(prefix)) {
      handler(req, req.path.substr(prefix.size()), reply);
      return;
    }
  }
  // What the gateway's router (gorilla/mux, Go's http.NotFound) answers for a path it does not
  // know: clients that check the body of a 404 see the text they know.
  PlainError(reply, 404, "404 page not found");
}

junction::http::Handler Router::Handler() const {
  return [this](const Request& req, Reply& reply) { Dispatch(req, reply); };
}

}  // namespace faasnode::api
