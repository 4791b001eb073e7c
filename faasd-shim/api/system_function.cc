// system_function.cc — the status of one function.
#include "faasd-shim/api/system_function.h"

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {

RouteHandler MakeSystemFunctionHandler(SystemDeployer* deployer) {
  return [deployer](const Request& req, std::string_view rest, Reply& reply) {
    if (req.method_name != "GET") {
      MethodNotAllowed(reply, "GET");
      return;
    }
    const std::string ns = QueryParam(req.query, "namespace").value_or(std::string(state::kDefaultNamespace));
    const std::string resolved = ns.empty() ? std::string(state::kDefaultNamespace) : ns;
    if (!deployer->NamespaceValid(resolved)) {
      PlainError(reply, 400, "namespace not valid");
      return;
    }
    auto f = rest.empty() || rest.find('/') != std::string_view::npos
                 ? std::nullopt
                 : deployer->Get(resolved, std::string(rest));
    if (!f) {
      EmptyReply(reply, 404);
      return;
    }
    JsonReply(reply, FunctionStatusJson(*f, /*with_available=*/true, /*with_limits=*/false));
  };
}

}  // namespace faasnode::api
