// system_secrets.cc — list, create or update, and remove secrets.
#include "faasd-shim/api/system_secrets.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {
namespace {

// The OpenFaaS name rule (NameExpression "-a-zA-Z_0-9." of the gateway's routes): a secret
// name becomes a file name and a function reads it by that name, so nothing else gets in.
bool OpenFaasName(std::string_view name) {
  for (const unsigned char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

RouteHandler MakeSystemSecretsHandler(SystemDeployer* deployer) {
  return [deployer](const Request& req, std::string_view, Reply& reply) {
    const std::string_view m = req.method_name;
    state::SecretStore* secrets = deployer->secrets();
    auto resolve = [](std::string ns) { return ns.empty() ? std::string(state::kDefaultNamespace) : ns; };
    if (m == "GET") {
      const std::string ns = resolve(QueryParam(req.query, "namespace").value_or(""));
      if (!deployer->NamespaceValid(ns)) {
        PlainError(reply, 400, "namespace not valid");
        return;
      }
      auto names = secrets->List(ns);
      if (!names) {
        PlainError(reply, 500, names.error().message());
        return;
      }
      nlohmann::ordered_json arr = nlohmann::ordered_json::array();
      for (const auto& n : *names) arr.push_back({{"name", n}, {"namespace", ns}});
      JsonReply(reply, arr.dump());
      return;
    }
    if (m != "POST" && m != "PUT" && m != "DELETE") {
      MethodNotAllowed(reply, "GET, POST, PUT, DELETE");
      return;
    }
    if (!CheckBodySize(req, reply)) return;
    auto r = state::ParseSecretRequest(req.body);
    if (!r) {
      PlainError(reply, 400, r.error().message());
      return;
    }
    if (auto v = state::SecretStore::ValidateName(r->name); !v) {
      PlainError(reply, 400, v.error().message());
      return;
    }
    if (!OpenFaasName(r->name)) {
      PlainError(reply, 400,
                 fmt::format("secret name {} is not valid: use only letters, digits, '-', '_' and '.' "
                             "(the OpenFaaS name rule [-a-zA-Z_0-9.]+)",
                             nlohmann::json(r->name).dump()));
      return;
    }
    std::string ns = r->ns;
    if (ns.empty()) ns = QueryParam(req.query, "namespace").value_or("");
    ns = resolve(ns);
    if (!deployer->NamespaceValid(ns)) {
      PlainError(reply, 400, "namespace not valid");
      return;
    }
    if (m == "DELETE") {
      if (auto d = secrets->Remove(ns, r->name); !d) {
        ErrorFromStatus(reply, d.error());
        return;
      }
      EmptyReply(reply);
      return;
    }
    if (auto p = secrets->Put(ns, r->name, r->has_raw_value ? std::string_view(r->raw_value) : r->value); !p) {
      ErrorFromStatus(reply, p.error());
      return;
    }
    EmptyReply(reply);
  };
}

}  // namespace faasnode::api
