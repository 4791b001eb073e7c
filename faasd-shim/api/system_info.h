// system_info.h — GET /system/info: the gateway's GatewayInfo shape, saying what this node is:
//   {"provider":{"provider":"faasnode","version":{"sha":SHA,"release":VERSION},
//    "orchestration":"none: native functions in-process, exec functions as host processes (no containers)"},
//    "version":{"commit_message":"...","sha":SHA,"release":VERSION},"arch":"x86_64"}
#pragma once

#include <string>

#include "faasd-shim/api/route.h"

namespace faasnode::api {
struct NodeInfo {
  std::string version;  // "0.1.0"
  std::string sha;      // the git commit of the build ("unknown" outside a checkout)
};
RouteHandler MakeSystemInfoHandler(NodeInfo info);
}  // namespace faasnode::api
