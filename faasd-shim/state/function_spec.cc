// function_spec.cc — FunctionDeployment and friends: Go-compatible JSON in and out.
#include "faasd-shim/state/function_spec.h"

#include <fmt/format.h>
#include <time.h>

#include <nlohmann/json.hpp>

#include "faasd-shim/auth/base64.h"

namespace faasnode::state {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;
using Json = nlohmann::json;

namespace {

std::unexpected<junction::Error> Bad(std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); }

Status<Json> ParseObject(std::string_view body, std::string_view what) {
  Json j = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Locate the error for the client: nlohmann's non-throwing parse gives no position, so
    // re-parse with exceptions (cold path: only for bad bodies).
    try {
      Json located = Json::parse(body.begin(), body.end());
      (void)located;
    } catch (const Json::parse_error& e) {
      return Bad(fmt::format("{}: malformed JSON at byte {}: send a JSON object", what, e.byte));
    }
    return Bad(fmt::format("{}: malformed JSON; send a JSON object", what));
  }
  if (!j.is_object()) return Bad(fmt::format("{}: expected a JSON object, got {}", what, j.type_name()));
  return j;
}

// Each reader: absent or null leaves `out` as it is (Go's zero value).
Status<void> GetString(const Json& o, const char* key, std::string* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  if (!it->is_string()) return Bad(fmt::format("field '{}' must be a string, got {}", key, it->type_name()));
  *out = it->get<std::string>();
  return {};
}

Status<void> GetBool(const Json& o, const char* key, bool* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  if (!it->is_boolean()) return Bad(fmt::format("field '{}' must be true or false, got {}", key, it->type_name()));
  *out = it->get<bool>();
  return {};
}

Status<void> GetStringMap(const Json& o, const char* key, std::map<std::string, std::string>* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  if (!it->is_object()) {
    return Bad(fmt::format("field '{}' must be an object of strings such as {{\"k\": \"v\"}}, got {}", key, it->type_name()));
  }
  for (auto e = it->begin(); e != it->end(); ++e) {
    if (!e.value().is_string()) {
      return Bad(fmt::format("field '{}.{}' must be a string, got {}", key, e.key(), e.value().type_name()));
    }
    (*out)[e.key()] = e.value().get<std::string>();
  }
  return {};
}

Status<void> GetStringList(const Json& o, const char* key, std::vector<std::string>* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  if (!it->is_array()) return Bad(fmt::format("field '{}' must be an array of strings, got {}", key, it->type_name()));
  for (const auto& e : *it) {
    if (!e.is_string()) return Bad(fmt::format("field '{}' must hold strings only, got {}", key, e.type_name()));
    out->push_back(e.get<std::string>());
  }
  return {};
}

Status<void> GetResources(const Json& o, const char* key, std::optional<FunctionResources>* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  if (!it->is_object()) {
    return Bad(fmt::format("field '{}' must be an object such as {{\"memory\": \"128Mi\"}}, got {}", key, it->type_name()));
  }
  FunctionResources r;
  const std::string mem_key = std::string(key) + ".memory", cpu_key = std::string(key) + ".cpu";
  if (auto s = GetString(*it, "memory", &r.memory); !s) return Bad(fmt::format("field '{}' must be a string", mem_key));
  if (auto s = GetString(*it, "cpu", &r.cpu); !s) return Bad(fmt::format("field '{}' must be a string", cpu_key));
  *out = std::move(r);
  return {};
}

Status<std::uint64_t> GetUint(const Json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return 0;
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
    return Bad(fmt::format("field '{}' must be a whole number >= 0, got {}", key,
                           it->is_number() ? it->dump() : std::string(it->type_name())));
  }
  return it->get<std::uint64_t>();
}

#define FAASNODE_TRY(expr)              \
  do {                                  \
    if (auto _s = (expr); !_s) return std::unexpected(_s.error()); \
  } while (0)

Status<FunctionSpec> SpecFromObject(const Json& j) {
  FunctionSpec s;
  FAASNODE_TRY(GetString(j, "service", &s.service));
  FAASNODE_TRY(GetString(j, "image", &s.image));
  FAASNODE_TRY(GetString(j, "namespace", &s.ns));
  FAASNODE_TRY(GetString(j, "envProcess", &s.env_process));
  FAASNODE_TRY(GetStringMap(j, "envVars", &s.env_vars));
  FAASNODE_TRY(GetStringList(j, "constraints", &s.constraints));
  FAASNODE_TRY(GetStringList(j, "secrets", &s.secrets));
  FAASNODE_TRY(GetStringMap(j, "labels", &s.labels));
  FAASNODE_TRY(GetStringMap(j, "annotations", &s.annotations));
  FAASNODE_TRY(GetResources(j, "limits", &s.limits));
  FAASNODE_TRY(GetResources(j, "requests", &s.requests));
  FAASNODE_TRY(GetBool(j, "readOnlyRootFilesystem", &s.read_only_root_filesystem));
  // Deprecated fields the OpenAPI lists as ignored still must not be of a wrong type.
  std::string ignored;
  FAASNODE_TRY(GetString(j, "network", &ignored));
  FAASNODE_TRY(GetString(j, "registryAuth", &ignored));
  return s;
}

Json ResourcesJson(const FunctionResources& r) {
  Json o = Json::object();
  if (!r.memory.empty()) o["memory"] = r.memory;
  if (!r.cpu.empty()) o["cpu"] = r.cpu;
  return o;
}

}  // namespace

Status<FunctionSpec> ParseFunctionDeployment(std::string_view body) {
  auto j = ParseObject(body, "function deployment");
  if (!j) return std::unexpected(j.error());
  auto s = SpecFromObject(*j);
  if (!s) return Bad("function deployment: " + s.error().message());
  return s;
}

std::string ToStoredJson(const FunctionSpec& s) {
  Json j = Json::object();
  j["service"] = s.service;
  j["image"] = s.image;
  j["namespace"] = s.ns;
  j["envProcess"] = s.env_process;
  j["envVars"] = s.env_vars;
  j["constraints"] = s.constraints;
  j["secrets"] = s.secrets;
  j["labels"] = s.labels;
  j["annotations"] = s.annotations;
  if (s.limits) j["limits"] = ResourcesJson(*s.limits);
  if (s.requests) j["requests"] = ResourcesJson(*s.requests);
  j["readOnlyRootFilesystem"] = s.read_only_root_filesystem;
  Json node = Json::object();
  node["kind"] = s.kind;
  node["artifact"] = s.artifact;
  node["max_inflight"] = s.max_inflight;
  node["idle_timeout_ms"] = s.idle_timeout_ms;
  if (s.scale) node["scale"] = *s.scale;
  if (s.start_cold) node["start_cold"] = true;
  node["exec_timeout_ms"] = s.exec_timeout_ms;
  node["combine_output"] = s.combine_output;
  j["faasnode"] = node;
  return j.dump();
}

Status<FunctionSpec> FromStoredJson(std::string_view json) {
  auto j = ParseObject(json, "stored deployment");
  if (!j) return std::unexpected(j.error());
  auto s = SpecFromObject(*j);
  if (!s) return Bad("stored deployment: " + s.error().message());
  auto node = j->find("faasnode");
  if (node == j->end() || !node->is_object()) return Bad("stored deployment: no faasnode section");
  FAASNODE_TRY(GetString(*node, "kind", &s->kind));
  FAASNODE_TRY(GetString(*node, "artifact", &s->artifact));
  if (auto it = node->find("max_inflight"); it != node->end() && it->is_number_integer()) s->max_inflight = it->get<int>();
  if (auto it = node->find("idle_timeout_ms"); it != node->end() && it->is_number_integer()) {
    s->idle_timeout_ms = it->get<std::int64_t>();
  }
  if (auto it = node->find("scale"); it != node->end() && it->is_number_integer()) s->scale = it->get<int>();
  if (auto it = node->find("start_cold"); it != node->end() && it->is_boolean()) s->start_cold = it->get<bool>();
  if (auto it = node->find("exec_timeout_ms"); it != node->end() && it->is_number_integer()) {
    s->exec_timeout_ms = it->get<std::int64_t>();
  }
  FAASNODE_TRY(GetBool(*node, "combine_output", &s->combine_output));
  return s;
}

Status<DeleteFunctionRequest> ParseDeleteFunctionRequest(std::string_view body) {
  auto j = ParseObject(body, "delete request");
  if (!j) return std::unexpected(j.error());
  DeleteFunctionRequest r;
  if (auto s = GetString(*j, "functionName", &r.function_name); !s) return Bad("delete request: " + s.error().message());
  if (auto s = GetString(*j, "namespace", &r.ns); !s) return Bad("delete request: " + s.error().message());
  return r;
}

Status<ScaleServiceRequest> ParseScaleServiceRequest(std::string_view body) {
  auto j = ParseObject(body, "scale request");
  if (!j) return std::unexpected(j.error());
  ScaleServiceRequest r;
  if (auto s = GetString(*j, "serviceName", &r.service_name); !s) return Bad("scale request: " + s.error().message());
  if (auto s = GetString(*j, "namespace", &r.ns); !s) return Bad("scale request: " + s.error().message());
  auto n = GetUint(*j, "replicas");
  if (!n) return Bad("scale request: " + n.error().message());
  r.replicas = *n;
  return r;
}

Status<SecretRequest> ParseSecretRequest(std::string_view body) {
  auto j = ParseObject(body, "secret");
  if (!j) return std::unexpected(j.error());
  SecretRequest r;
  if (auto s = GetString(*j, "name", &r.name); !s) return Bad("secret: " + s.error().message());
  if (auto s = GetString(*j, "namespace", &r.ns); !s) return Bad("secret: " + s.error().message());
  if (auto s = GetString(*j, "value", &r.value); !s) return Bad("secret: " + s.error().message());
  std::string raw;
  if (auto s = GetString(*j, "rawValue", &raw); !s) {
    return Bad("secret: field 'rawValue' must be a base64 string (Go's []byte)");
  }
  if (!raw.empty()) {
    auto d = auth::Base64Decode(raw);
    if (!d) return Bad("secret: field 'rawValue' is not valid base64: " + d.error().message());
    r.raw_value = std::move(*d);
    r.has_raw_value = true;
  }
  return r;
}

Status<NamespaceRequest> ParseNamespaceRequest(std::string_view body) {
  auto j = ParseObject(body, "namespace");
  if (!j) return std::unexpected(j.error());
  NamespaceRequest r;
  if (auto s = GetString(*j, "name", &r.name); !s) return Bad("namespace: " + s.error().message());
  if (auto s = GetStringMap(*j, "labels", &r.labels); !s) return Bad("namespace: " + s.error().message());
  if (auto s = GetStringMap(*j, "annotations", &r.annotations); !s) return Bad("namespace: " + s.error().message());
  return r;
}

std::string Rfc3339Nano(std::int64_t unix_ns) {
  const time_t secs = static_cast<time_t>(unix_ns / 1'000'000'000);
  long frac = static_cast<long>(unix_ns % 1'000'000'000);
  tm t;
  gmtime_r(&secs, &t);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                                t.tm_hour, t.tm_min, t.tm_sec);
  if (frac > 0) {
    std::string f = fmt::format("{:09}", frac);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  out += "Z";
  return out;
}

}  // namespace faasnode::state
