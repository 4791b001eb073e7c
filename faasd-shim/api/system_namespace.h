// system_namespace.h — /system/namespace/{NS}, as faasd's namespace mutator:
//   GET /system/namespace/NS      200 {"name","labels"[,"annotations"]}; 404 "namespace NS not found"
//   POST /system/namespace/       body {"name":NS,"labels":{"openfaas":"1"}}: 201; 409 "namespace NS already exists"
//   PUT /system/namespace/NS      202; the body's name must be NS (400); 404 when absent
//   DELETE /system/namespace/NS   202 (body as faas-cli sends it); 404 when absent; 400 when
//                                 functions are still deployed in it, or for openfaas-fn
// A body without label openfaas "1" (or "true"): 400 "request does not have openfaas=1 label";
// bad JSON 400; empty name 400. Stored durably; the namespace takes deployments and secrets.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"

namespace faasnode::api {
// Route as prefix "/system/namespace/" (rest = NS or "").
RouteHandler MakeSystemNamespaceHandler(SystemDeployer* deployer);
}  // namespace faasnode::api
