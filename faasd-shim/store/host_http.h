// host_http.h — http_request of the host table (ABI v3): a function's outbound HTTP call
// through the node's junction/http client. Internal to faasd-shim/store.
//
// Parks the calling uthread while the call runs (the client's socket waits), never the
// kthread; on a plain thread, or with no client lent (InstanceOptions::http), it answers
// FAASNODE_ERR_UNAVAILABLE at once. Results live in the faasnode_response until handle returns.
#pragma once

#include "faasnode/function_abi.h"

namespace faasnode::store {

int HostHttpRequest(faasnode_response* response, const faasnode_http_request* request, faasnode_http_result* result);

}  // namespace faasnode::store
