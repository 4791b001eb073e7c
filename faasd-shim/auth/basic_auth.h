// basic_auth.h — wraps an endpoint handler in faasd's basic-auth check.
//
//   router.Exact("/system/functions", auth::RequireBasicAuth(creds, api::MakeSystemFunctionsHandler(...)));
//
// A request without the node's credentials gets what faas-provider's DecorateWithBasicAuth
// answers: 401, `WWW-Authenticate: Basic realm="Restricted"`, body `invalid credentials`
// (text/plain, no newline), and the wrapped handler does not run. Open routes (left
// unwrapped, as the gateway leaves them): /function/*, /async-function/*, /healthz, /metrics.
//
// Threads: the returned handler may run on any uthread at once; `credentials` must outlive it
// and stays read-only.
#pragma once

#include <functional>
#include <string_view>

#include "faasd-shim/auth/credentials.h"
#include "junction/http/request.h"
#include "junction/http/server/server.h"

namespace faasnode::auth {

// The same type as api::RouteHandler.
using Handler =
    std::function<void(const junction::http::Request& req, std::string_view rest, junction::http::Reply& reply)>;

Handler RequireBasicAuth(const Credentials* credentials, Handler inner);

// Whether `req` carries the credentials; and the 401 reply, for handlers that check themselves.
bool Authorized(const Credentials& credentials, const junction::http::Request& req);
void UnauthorizedReply(junction::http::Reply& reply);

}  // namespace faasnode::auth
