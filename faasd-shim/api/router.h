// router.h — maps request paths to endpoint handlers: exact paths and path prefixes.
//
// Routes are added before serving and read-only afterwards (Handler() may then be called
// from any uthread). The longest matching prefix wins; an unknown path gets Go's 404:
// text/plain "404 page not found\n", as the gateway's router answers it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "faasd-shim/api/route.h"
#include "junction/http/server/server.h"

namespace faasnode::api {

class Router {
 public:
  void Exact(std::string path, RouteHandler handler);
  void Prefix(std::string prefix, RouteHandler handler);
  // The server-facing handler; the Router must outlive it.
  junction::http::Handler Handler() const;
  void Dispatch(const Request& req, Reply& reply) const;

 private:
  std::vector<std::pair<std::string, RouteHandler>> exact_;
  std::vector<std::pair<std::string, RouteHandler>> prefixes_;  // longest first
};

}  // namespace faasnode::api
