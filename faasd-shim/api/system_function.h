// system_function.h — GET /system/function/NAME[?namespace=NS][&usage=...]: one FunctionStatus
// with availableReplicas (the warm instances), 404 with an empty body when there is no such
// function, 400 "namespace not valid". `usage` is accepted and ignored, as faasd does.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"

namespace faasnode::api {
// Route it as a prefix "/system/function/": `rest` is NAME.
RouteHandler MakeSystemFunctionHandler(SystemDeployer* deployer);
}  // namespace faasnode::api
