// basic_auth.cc — the 401 wrapper.
#include "faasd-shim/auth/basic_auth.h"

namespace faasnode::auth {

bool Authorized(const Credentials& credentials, const junction::http::Request& req) {
  const auto h = req.headers.Find("Authorization");
  return h.has_value() && CheckBasicAuth(credentials, *h);
}

void UnauthorizedReply(junction::http::Reply& reply) {
  reply.status = 401;
  reply.headers.clear();
  reply.headers.emplace_back("WWW-Authenticate", "Basic realm=\"Restricted\"");
  reply.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  reply.body = "invalid credentials";
}

Handler RequireBasicAuth(const Credentials* credentials, Handler inner) {
  return [credentials, inner = std::move(inner)](const junction::http::Request& req, std::string_view rest,
                                                 junction::http::Reply& reply) {
    if (!Authorized(*credentials, req)) {
      UnauthorizedReply(reply);
      return;
    }
    inner(req, rest, reply);
  };
}

}  // namespace faasnode::auth
