// healthz.cc — the liveness endpoint.
#include "faasd-shim/api/healthz.h"

namespace faasnode::api {

RouteHandler MakeHealthzHandler() {
  return [](const Request& req, std::string_view, Reply& reply) {
    if (req.method_name != "GET" && req.method_name != "HEAD") {
      ErrorReply(reply, 405, "/healthz answers GET and HEAD only");
      return;
    }
    reply.status = 200;
    reply.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
    reply.body = "OK";
  };
}

}  // namespace faasnode::api
