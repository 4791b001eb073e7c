// system_namespace.cc — get, create, update and delete one namespace.
#include "faasd-shim/api/system_namespace.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "faasd-shim/api/system_common.h"
#include "faasd-shim/store/function_store.h"

namespace faasnode::api {

RouteHandler MakeSystemNamespaceHandler(SystemDeployer* deployer) {
  return [deployer](const Request& req, std::string_view rest, Reply& reply) {
    const std::string_view m = req.method_name;
    std::string url_name(rest);
    while (!url_name.empty() && url_name.back() == '/') url_name.pop_back();
    if (m == "GET") {
      if (url_name.empty()) {
        PlainError(reply, 400, "namespace name is required: GET /system/namespace/NS");
        return;
      }
      auto n = deployer->GetNamespace(url_name);
      if (!n) {
        PlainError(reply, 404, fmt::format("namespace {} not found", url_name));
        return;
      }
      nlohmann::ordered_json j;
      j["name"] = n->name;
      if (!n->annotations.empty()) j["annotations"] = n->annotations;
      if (!n->labels.empty()) j["labels"] = n->labels;
      JsonReply(reply, j.dump());
      return;
    }
    if (m != "POST" && m != "PUT" && m != "DELETE") {
      MethodNotAllowed(reply, "GET, POST, PUT, DELETE");
      return;
    }
    if (!CheckBodySize(req, reply)) return;
    auto r = state::ParseNamespaceRequest(req.body);
    if (!r) {
      PlainError(reply, 400, r.error().message());
      return;
    }
    if (m != "POST" && !url_name.empty() && r->name.empty()) r->name = url_name;
    if (r->name.empty()) {
      PlainError(reply, 400, "namespace name is required: {\"name\": \"NS\", \"labels\": {\"openfaas\": \"1\"}}");
      return;
    }
    if (m != "POST" && r->name != url_name) {
      PlainError(reply, 400, fmt::format("namespace {} in the body does not match {} in the path", r->name, url_name));
      return;
    }
    if (auto v = store::FunctionStore::ValidateName(r->name); !v) {
      PlainError(reply, 400, fmt::format("namespace {}: {}", r->name, v.error().message()));
      return;
    }
    auto label = r->labels.find("openfaas");
    if (label == r->labels.end() || (label->second != "1" && label->second != "true")) {
      PlainError(reply, 400, "request does not have openfaas=1 label");
      return;
    }
    junction::Status<void> s = m == "POST"  ? deployer->CreateNamespace(*r)
                               : m == "PUT" ? deployer->UpdateNamespace(*r)
                                            : deployer->DeleteNamespace(r->name);
    if (!s) {
      const int status = s.error().code() == junction::ErrorCode::kAlreadyExists ? 409 : StatusFor(s.error());
      PlainError(reply, status, s.error().message());
      return;
    }
    EmptyReply(reply, m == "POST" ? 201 : 202);
  };
}

}  // namespace faasnode::api
