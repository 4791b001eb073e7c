// host_call.h — the host's side of the ABI's opaque per-call objects (faasnode_response,
// faasnode_logger), shared by the host API's files. Internal to faasd-shim/store.
//
// A faasnode_response lives on the stack of Instance::Invoke for one handle call; whatever the
// host lends the function for that call (outbound HTTP results) lives in it and dies with it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "faasd-shim/store/instance.h"
#include "junction/base/error.h"
#include "junction/sched/tsc.h"

namespace faasnode::store {
struct HttpCallRecord;  // host_http.cc
struct HttpCallRecordDeleter {
  void operator()(HttpCallRecord* r) const;
};
}  // namespace faasnode::store

// The opaque types of function_abi.h, defined by the host (global namespace, as declared).
struct faasnode_logger {
  const faasnode::store::LogSink* sink;
  std::string_view function;
  std::uint64_t call_id;
};

struct faasnode_response {
  faasnode::store::Response* out;
  std::size_t max_body;
  // The first refused call: it fails the invocation.
  junction::ErrorCode refusal_code;
  std::string refusal;  // empty: none
  // Outbound HTTP (ABI v3): the client the node lends (null: none), the invocation's deadline,
  // and each call's result, kept until handle returns. Empty (no allocation) unless used.
  junction::http::Client* http = nullptr;
  junction::sched::Deadline deadline = junction::sched::Deadline::max();
  std::vector<std::unique_ptr<faasnode::store::HttpCallRecord, faasnode::store::HttpCallRecordDeleter>> http_calls;
};
