// instrument.h — wraps the invocation route so that every call of a deployed function is
// counted into GatewayMetrics (started, code, seconds), as the gateway counts its proxy.
//
// The wrapped route has the invoke route's shape: `rest` = NAME[.NS][/path]. NAME.NS splits at
// the last '.', the namespace defaulting to openfaas-fn. Only names `exists` accepts are
// counted, so unknown names (404s) cannot grow the label set without bound.
#pragma once

#include <functional>
#include <string_view>

#include "faasd-shim/metrics/gateway_metrics.h"
#include "junction/http/request.h"
#include "junction/http/server/server.h"

namespace faasnode::metrics {

using InvokeRoute =
    std::function<void(const junction::http::Request&, std::string_view rest, junction::http::Reply&)>;
// True when function `name` is deployed in namespace `ns`. Called on the invocation path:
// must be cheap and must not block.
using FunctionExists = std::function<bool(std::string_view name, std::string_view ns)>;

// `metrics` must outlive the returned route.
InvokeRoute Instrument(InvokeRoute inner, GatewayMetrics* metrics, FunctionExists exists);

// NAME[.NS] -> {NAME, NS}; NS defaults to openfaas-fn.
std::pair<std::string_view, std::string_view> SplitFunctionName(std::string_view name_ns);

}  // namespace faasnode::metrics
