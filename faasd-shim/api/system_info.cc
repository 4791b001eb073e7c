// system_info.cc — what the node is.
#include "faasd-shim/api/system_info.h"

#include <sys/utsname.h>

#include <nlohmann/json.hpp>

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {

RouteHandler MakeSystemInfoHandler(NodeInfo info) {
  utsname u{};
  uname(&u);
  nlohmann::ordered_json j;
  j["provider"] = {{"provider", "faasnode"},
                   {"version", {{"sha", info.sha}, {"release", info.version}}},
                   {"orchestration", "none: native functions run in the node's process, exec functions "
                                     "(fprocess) as host processes; this node runs no containers"}};
  j["version"] = {{"commit_message", "faasnode " + info.version}, {"sha", info.sha}, {"release", info.version}};
  j["arch"] = u.machine;
  std::string body = j.dump();
  return [body = std::move(body)](const Request& req, std::string_view, Reply& reply) {
    if (req.method_name != "GET") {
      MethodNotAllowed(reply, "GET");
      return;
    }
    JsonReply(reply, body);
  };
}

}  // namespace faasnode::api
