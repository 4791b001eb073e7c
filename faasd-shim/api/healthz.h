// healthz.h — GET|HEAD /healthz: 200 "OK" while the node serves (as faasd's provider does).
#pragma once

#include "faasd-shim/api/route.h"

namespace faasnode::api {
RouteHandler MakeHealthzHandler();
}  // namespace faasnode::api
