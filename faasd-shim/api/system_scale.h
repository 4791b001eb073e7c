// system_scale.h — POST /system/scale-function/NAME {"serviceName","replicas","namespace"}:
// keeps `replicas` instances warm (at most com.openfaas.scale.max; below 1 counts as 1, as the
// gateway clamps it: faasd's clients never reach zero this way). 200 empty; 400 bad JSON
// (with the field); 404 "function: NAME.NS not found"; 405 other methods. The body's
// serviceName wins over the path, as in faasd.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"

namespace faasnode::api {
RouteHandler MakeSystemScaleHandler(SystemDeployer* deployer);
}  // namespace faasnode::api
