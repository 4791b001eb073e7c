// system_functions.cc — list, deploy, update and delete functions.
#include "faasd-shim/api/system_functions.h"

#include <fmt/format.h>

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {

RouteHandler MakeSystemFunctionsHandler(SystemDeployer* deployer) {
  return [deployer](const Request& req, std::string_view, Reply& reply) {
    const std::string_view m = req.method_name;
    if (m == "GET") {
      const std::string ns = QueryParam(req.query, "namespace").value_or("");
      const std::string resolved = ns.empty() ? std::string(state::kDefaultNamespace) : ns;
      if (!deployer->NamespaceValid(resolved)) {
        PlainError(reply, 400, "namespace not valid");
        return;
      }
      std::string body = "[";
      bool first = true;
      for (const DeployedSpec& f : deployer->List(resolved)) {
        if (!first) body += ',';
        first = false;
        body += FunctionStatusJson(f, /*with_available=*/false, /*with_limits=*/true);
      }
      body += ']';
      JsonReply(reply, std::move(body));
      return;
    }
    if (m != "POST" && m != "PUT" && m != "DELETE") {
      MethodNotAllowed(reply, "GET, POST, PUT, DELETE");
      return;
    }
    if (!CheckBodySize(req, reply)) return;
    if (m == "DELETE") {
      auto r = state::ParseDeleteFunctionRequest(req.body);
      if (!r) {
        PlainError(reply, 400, r.error().message());
        return;
      }
      if (r->function_name.empty()) {
        PlainError(reply, 400, "functionName is required: {\"functionName\": \"NAME\"}");
        return;
      }
      if (auto d = deployer->Delete(r->ns, r->function_name); !d) {
        ErrorFromStatus(reply, d.error());
        return;
      }
      EmptyReply(reply);
      return;
    }
    auto spec = state::ParseFunctionDeployment(req.body);
    if (!spec) {
      PlainError(reply, 400, spec.error().message());
      return;
    }
    auto done = m == "POST" ? deployer->Create(std::move(*spec)) : deployer->Update(std::move(*spec));
    if (!done) {
      ErrorFromStatus(reply, done.error());
      return;
    }
    EmptyReply(reply);
  };
}

}  // namespace faasnode::api
