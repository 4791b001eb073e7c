// system_scale.cc — scale one function.
#include "faasd-shim/api/system_scale.h"

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {

RouteHandler MakeSystemScaleHandler(SystemDeployer* deployer) {
  return [deployer](const Request& req, std::string_view rest, Reply& reply) {
    if (req.method_name != "POST") {
      MethodNotAllowed(reply, "POST");
      return;
    }
    if (!CheckBodySize(req, reply)) return;
    auto r = state::ParseScaleServiceRequest(req.body);
    if (!r) {
      PlainError(reply, 400, r.error().message());
      return;
    }
    std::string name = r->service_name.empty() ? std::string(rest) : r->service_name;
    std::string ns = r->ns;
    if (ns.empty()) ns = QueryParam(req.query, "namespace").value_or("");
    // The gateway's scale handler (the surface faasd's clients see) clamps replicas to at least
    // 1 before its provider sees them (faasd's provider would refuse 0 with 400): 0 keeps one
    // instance. Scale to zero is the labels' (com.openfaas.scale.zero), as in OpenFaaS.
    const std::uint64_t replicas = r->replicas < 1 ? 1 : r->replicas;
    if (auto s = deployer->Scale(ns, name, replicas); !s) {
      ErrorFromStatus(reply, s.error());
      return;
    }
    EmptyReply(reply);
  };
}

}  // namespace faasnode::api
