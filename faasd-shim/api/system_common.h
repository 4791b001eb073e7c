// system_common.h — what the /system endpoints share: faasd's plain-text error replies, JSON
// replies, body limits, query parameters, and the FunctionStatus JSON.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"
#include "junction/base/error.h"

namespace faasnode::api {

// The largest /system request body (a deployment, a secret); larger ones get 413.
inline constexpr std::size_t kMaxSystemBodyBytes = 1 << 20;

// Go's http.Error: status, text/plain; charset=utf-8, X-Content-Type-Options: nosniff,
// body = message + "\n".
void PlainError(Reply& reply, int status, std::string_view message);
// 405 with an empty body (gorilla/mux's answer) and an Allow header.
void MethodNotAllowed(Reply& reply, std::string_view allow);
// 200 (or `status`) with a JSON body.
void JsonReply(Reply& reply, std::string body, int status = 200);
// An empty-bodied success (faasd's deploy/update/delete/scale/secret answers).
void EmptyReply(Reply& reply, int status = 200);

// The status an error of the deployer maps to: kInvalidArgument/kAlreadyExists 400,
// kNotFound 404, kResourceExhausted 413, anything else 500.
int StatusFor(const junction::Error& error);
void ErrorFromStatus(Reply& reply, const junction::Error& error);

// True when the body fits; otherwise fills a 413 and returns false.
bool CheckBodySize(const Request& req, Reply& reply);

// The value of `key` in a raw query string, percent-decoded; nullopt when absent.
std::optional<std::string> QueryParam(std::string_view query, std::string_view key);

// The annotation FunctionStatus carries when a native function has a limits.memory the node
// cannot enforce (value: why). Set only by the node; one a client sends is not shown.
inline constexpr std::string_view kMemoryNotEnforcedAnnotation = "com.faasnode.limits.memory";

// FunctionStatus as faasd's list and get handlers render it (Go omitempty), with
// invocationCount from the node's own counter; availableReplicas only when `with_available`.
std::string FunctionStatusJson(const DeployedSpec& f, bool with_available, bool with_limits);

}  // namespace faasnode::api
