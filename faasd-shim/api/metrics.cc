// metrics.cc — the /metrics endpoint.
#include "faasd-shim/api/metrics.h"

namespace faasnode::api {

RouteHandler MakeMetricsHandler(const metrics::Registry* registry) {
  return [registry](const Request& req, std::string_view, Reply& reply) {
    if (req.method != junction::http::Method::kGet && req.method != junction::http::Method::kHead) {
      ErrorReply(reply, 405, "/metrics takes GET; send GET /metrics");
      reply.headers.emplace_back("Allow", "GET, HEAD");
      return;
    }
    reply.status = 200;
    reply.headers.emplace_back("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    reply.body = registry->Render();
  };
}

}  // namespace faasnode::api
