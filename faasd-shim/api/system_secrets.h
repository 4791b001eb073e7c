// system_secrets.h — /system/secrets, as faasd's secret handler:
//   GET ?namespace=NS       200 [{"name","namespace"}...]; values are never returned
//   POST|PUT {"name","namespace"?,"value"|"rawValue"(base64)}  200 empty: create or overwrite
//   DELETE {"name"} (namespace from the body, else the query)  200 empty; 404 when absent
// Errors: 400 "non-empty name is required", 400 "directory traversal found in name", 400 a
// name outside the OpenFaaS rule [-a-zA-Z_0-9.]+ ("secret name \"a b\" is not valid: ..."), 400 bad
// JSON or a field of the wrong type (faasd answers 500 for bad JSON; a client error is 400
// here), 400 "namespace not valid", 413 too large, 405 other methods.
// Values are files under the state dir (mode 0600); functions that list a secret read it as a
// file in $FAASNODE_SECRETS_DIR, or through the SDK.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/api/system_deployer.h"

namespace faasnode::api {
RouteHandler MakeSystemSecretsHandler(SystemDeployer* deployer);
}  // namespace faasnode::api
