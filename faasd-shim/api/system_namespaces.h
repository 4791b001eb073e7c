// system_namespaces.h — GET /system/namespaces: 200 ["openfaas-fn", ...every namespace made
// through /system/namespace/ with an "openfaas" label].
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"

namespace faasnode::api {
RouteHandler MakeSystemNamespacesHandler(SystemDeployer* deployer);
}  // namespace faasnode::api
