// route.h — the shape of one API endpoint: a handler made by a factory from its dependencies.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "junction/http/request.h"
#include "junction/http/server/server.h"

namespace faasnode::api {

using junction::http::Reply;
using junction::http::Request;

// `rest` is what follows the route's prefix in the path (empty for exact routes).
using RouteHandler = std::function<void(const Request& req, std::string_view rest, Reply& reply)>;

// A JSON error reply: {"error": message}.
void ErrorReply(Reply& reply, int status, std::string_view message);

}  // namespace faasnode::api
