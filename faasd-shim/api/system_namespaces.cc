// system_namespaces.cc — list namespaces.
#include "faasd-shim/api/system_namespaces.h"

#include <nlohmann/json.hpp>

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {

RouteHandler MakeSystemNamespacesHandler(SystemDeployer* deployer) {
  return [deployer](const Request& req, std::string_view, Reply& reply) {
    if (req.method_name != "GET") {
      MethodNotAllowed(reply, "GET");
      return;
    }
    JsonReply(reply, nlohmann::json(deployer->Namespaces()).dump());
  };
}

}  // namespace faasnode::api
