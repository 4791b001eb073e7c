// function_spec.h — one deployment as the OpenFaaS API describes it (FunctionDeployment), plus
// what this node adds, and its JSON: strict parsing of API bodies, the stored form.
//
//   auto spec = ParseFunctionDeployment(req.body);    // 400 with spec.error().message()
//   std::string stored = ToStoredJson(*spec);          // into the StateDb
//   auto back = FromStoredJson(stored);                 // at start-up
//
// Parsing follows Go's encoding/json as faas-provider's types use it: unknown fields are
// ignored, `null` is the zero value of any field, and a field of the wrong type is an error
// that names the field and the type it must have. Nothing is validated beyond types here
// (names, secrets and images are the deployer's to check).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "junction/base/error.h"

namespace faasnode::state {

inline constexpr std::string_view kDefaultNamespace = "openfaas-fn";

struct FunctionResources {
  std::string memory;
  std::string cpu;
  bool empty() const { return memory.empty() && cpu.empty(); }
};

struct FunctionSpec {
  // FunctionDeployment (faas-provider types/function_deployment.go).
  std::string service;
  std::string image;
  std::string ns;  // "" in a request means openfaas-fn; stored resolved
  std::string env_process;
  std::map<std::string, std::string> env_vars;
  std::vector<std::string> constraints;
  std::vector<std::string> secrets;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<FunctionResources> limits;
  std::optional<FunctionResources> requests;
  bool read_only_root_filesystem = false;

  // This node's own, never sent by clients: what `image` resolved to, and pool settings.
  std::string kind = "native";  // "native" (a NAME.so of the store) or "exec" (fprocess on the host)
  std::string artifact;         // native: the store's name for the object
  int max_inflight = 0;         // per instance; 0: unlimited
  std::int64_t idle_timeout_ms = -1;  // -1: from the labels (com.openfaas.scale.zero)
  std::optional<int> scale;     // replicas asked for by /system/scale-function; none: from labels
  // A function the node's config declared: no instance until its first call (a cold start),
  // and a floor of com.openfaas.scale.min or 0 (not the API's 1). API deployments: false.
  bool start_cold = false;
  std::int64_t exec_timeout_ms = -1;  // exec: -1 the node's default, 0 none
  bool combine_output = true;         // exec: stderr joins the response body
};

// A FunctionDeployment body (POST/PUT /system/functions). Errors: kInvalidArgument with a
// message for the client (malformed JSON with its position, or "field 'x' must be ...").
[[nodiscard]] junction::Status<FunctionSpec> ParseFunctionDeployment(std::string_view body);

std::string ToStoredJson(const FunctionSpec& spec);
[[nodiscard]] junction::Status<FunctionSpec> FromStoredJson(std::string_view json);

// Small bodies of the other endpoints, with the same rules.
struct DeleteFunctionRequest {
  std::string function_name;
  std::string ns;
};
[[nodiscard]] junction::Status<DeleteFunctionRequest> ParseDeleteFunctionRequest(std::string_view body);

struct ScaleServiceRequest {
  std::string service_name;
  std::uint64_t replicas = 0;
  std::string ns;
};
[[nodiscard]] junction::Status<ScaleServiceRequest> ParseScaleServiceRequest(std::string_view body);

struct SecretRequest {
  std::string name;
  std::string ns;
  std::string value;
  std::string raw_value;  // decoded from base64
  bool has_raw_value = false;
};
[[nodiscard]] junction::Status<SecretRequest> ParseSecretRequest(std::string_view body);

struct NamespaceRequest {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};
[[nodiscard]] junction::Status<NamespaceRequest> ParseNamespaceRequest(std::string_view body);

// Go's time.Time JSON form for a unix-ns instant: RFC 3339 with nanoseconds, trailing zeros
// dropped, UTC "Z" ("2026-12-02T16:14:29.123456789Z").
std::string Rfc3339Nano(std::int64_t unix_ns);

}  // namespace faasnode::state
