// metrics.h — GET|HEAD /metrics: the node's Prometheus exposition (text format 0.0.4), no auth
// (as faasd's provider serves it). Other methods: 405.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/metrics/registry.h"

namespace faasnode::api {

// `registry` must outlive the handler.
RouteHandler MakeMetricsHandler(const metrics::Registry* registry);

}  // namespace faasnode::api
