// system_functions.h — /system/functions: GET list, POST deploy (create only), PUT update,
// DELETE remove; faasd's status codes and texts (openfaas-api.md section 2.3).
//
//   GET    ?namespace=NS  200 [FunctionStatus...] ("[]" when none); 400 "namespace not valid"
//   POST   FunctionDeployment  200 empty; 400 bad JSON/type/name/image/secret or already exists
//   PUT    FunctionDeployment  200 empty; 404 "function: NAME.NS not found"; 400 as POST
//   DELETE {"functionName","namespace"}  200 empty; 404 "function NAME.NS not found"; 400
// Bodies over kMaxSystemBodyBytes: 413. Other methods: 405. Nothing changes on any error.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"

namespace faasnode::api {
// `deployer` must outlive the handler. Wrap it in auth::RequireBasicAuth.
RouteHandler MakeSystemFunctionsHandler(SystemDeployer* deployer);
}  // namespace faasnode::api
