// async_invoke.h — POST /async-function/NAME[.NS][/path][?query]: queue an invocation, 202.
//
// As the gateway's queue proxy: the whole request (method, path after the name, query,
// headers, body) and X-Callback-Url are queued; no check that the function exists (the
// callback reports a 404 as X-Function-Status). The 202 is sent only once the call's row is
// fsync'd (async/async_queue.h), with an empty body and X-Call-Id (the request's, or a fresh
// UUID), X-Start-Time (unix ns) and X-Served-By. Errors: 405 for other methods (empty body,
// as gorilla/mux); 404 `404 page not found` for a name outside [-a-zA-Z_0-9.]; 400 when
// X-Callback-Url is not a URL the node can call back (the message says which are); 500
// `Error queuing request: ...` when the call could not be stored (nothing was queued).
// No auth (an open route, as in faasd).
#pragma once

#include <string>

#include "faasd-shim/api/route.h"
#include "faasd-shim/async/async_queue.h"

namespace faasnode::api {

// `queue` must outlive the handler. `served_by`: the X-Served-By value ("faasnode/0.1.0").
RouteHandler MakeAsyncInvokeHandler(async::AsyncQueue* queue, std::string served_by);

// A random version-4 UUID (the gateway's call ids), from a per-kthread generator.
std::string NewCallUuid();

}  // namespace faasnode::api
