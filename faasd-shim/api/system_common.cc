// system_common.cc — replies, limits, query parsing and FunctionStatus JSON for /system.
#include "faasd-shim/api/system_common.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace faasnode::api {

void PlainError(Reply& reply, int status, std::string_view message) {
  reply.status = status;
  reply.headers.clear();
  reply.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
  reply.body.assign(message);
  reply.body += '\n';
}

void MethodNotAllowed(Reply& reply, std::string_view allow) {
  reply.status = 405;
  reply.headers.clear();
  reply.headers.emplace_back("Allow", std::string(allow));
  reply.body.clear();
}

void JsonReply(Reply& reply, std::string body, int status) {
  reply.status = status;
  reply.headers.clear();
  reply.headers.emplace_back("Content-Type", "application/json");
  reply.body = std::move(body);
}

void EmptyReply(Reply& reply, int status) {
  reply.status = status;
  reply.headers.clear();
  reply.body.clear();
}

int StatusFor(const junction::Error& e) {
  switch (e.code()) {
    case junction::ErrorCode::kInvalidArgument:
    case junction::ErrorCode::kAlreadyExists:
      return 400;
    case junction::ErrorCode::kNotFound:
      return 404;
    case junction::ErrorCode::kResourceExhausted:
      return 413;
    default:
      return 500;
  }
}

void ErrorFromStatus(Reply& reply, const junction::Error& e) { PlainError(reply, StatusFor(e), e.message()); }

bool CheckBodySize(const Request& req, Reply& reply) {
  if (req.body.size() <= kMaxSystemBodyBytes) return true;
  PlainError(reply, 413,
             fmt::format("request body of {} bytes is larger than the {} bytes a /system request may carry; "
                         "nothing was changed",
                         req.body.size(), kMaxSystemBodyBytes));
  return false;
}

std::optional<std::string> QueryParam(std::string_view query, std::string_view key) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    std::string out;
    if (eq == std::string_view::npos) return out;
    std::string_view v = pair.substr(eq + 1);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '+') {
        out += ' ';
      } else if (v[i] == '%' && i + 2 < v.size() + 0 && hex(v[i + 1]) >= 0 && hex(v[i + 2]) >= 0) {
        out += static_cast<char>(hex(v[i + 1]) * 16 + hex(v[i + 2]));
        i += 2;
      } else {
        out += v[i];
      }
    }
    return out;
  }
  return std::nullopt;
}

std::string FunctionStatusJson(const DeployedSpec& f, bool with_available, bool with_limits) {
  using OJson = nlohmann::ordered_json;
  const state::FunctionSpec& s = f.spec;
  OJson j = OJson::object();
  j["name"] = s.service;
  j["image"] = s.image;
  j["namespace"] = s.ns;
  if (!s.env_process.empty()) j["envProcess"] = s.env_process;
  OJson env = OJson::object();
  for (const auto& [k, v] : s.env_vars) {
    if (k != "fprocess" && k != "PATH") env[k] = v;
  }
  if (!env.empty()) j["envVars"] = env;
  if (!s.secrets.empty()) j["secrets"] = s.secrets;
  OJson labels = OJson::object();
  for (const auto& [k, v] : s.labels) labels[k] = v;
  j["labels"] = labels;
  OJson ann = OJson::object();
  for (const auto& [k, v] : s.annotations) {
    if (k != kMemoryNotEnforcedAnnotation) ann[k] = v;  // the node's to say, not a client's
  }
  // A native function runs in the node's own address space, so limits.memory cannot be held
  // to it. faas-cli describe prints a function's annotations (and list -v / the UI show them),
  // so the user who set the limit sees that it is not enforced where they look, not only in
  // the node's log. Exec functions get it as RLIMIT_AS: no annotation.
  if (s.kind == "native" && s.limits && !s.limits->memory.empty()) {
    ann[std::string(kMemoryNotEnforcedAnnotation)] =
        "not enforced: a native function shares the node's address space (exec functions get limits.memory "
        "as RLIMIT_AS)";
  }
  j["annotations"] = ann;
  if (with_limits && s.limits && !s.limits->memory.empty()) j["limits"] = OJson{{"memory", s.limits->memory}};
  if (s.read_only_root_filesystem) j["readOnlyRootFilesystem"] = true;
  if (f.invocations > 0) j["invocationCount"] = f.invocations;
  const int live = f.pool ? f.pool->stats().instances : 0;
  if (live > 0) j["replicas"] = live;
  if (with_available && live > 0) j["availableReplicas"] = live;
  j["createdAt"] = state::Rfc3339Nano(f.created_ns);
  return j.dump();
}

}  // namespace faasnode::api
