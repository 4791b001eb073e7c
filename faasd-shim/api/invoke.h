// invoke.h — ANY /function/NAME[.NAMESPACE][/path][?query]: run a deployed function.
//
// The function sees the path after /function/NAME and the raw query. Its cycles are billed
// to a fresh account (the call id) while it runs. Replies: the function's own status, headers
// and body, plus X-Call-Id, X-Start-Time (unix ns), X-Duration-Seconds, and
// X-Cold-Start-Seconds when this call started the instance; with a biller whose
// response_headers is on, X-Energy-Joules and X-Carbon-Grams (the estimate at completion:
// the call's on-CPU cycles × the last interval's joules per cycle; the ledger row is final),
// X-Energy-Source (rapl, nvml, model, replay) and X-Energy-Estimate (on-cpu: the call never
// left its core, its cycles are exact; upper-bound: it parked, its wall time was counted); 404 for an unknown function or
// namespace, 429 past the in-flight limit, 500 when the function fails or cannot start.
#pragma once

#include "faasd-shim/api/route.h"
#include "faasd-shim/billing/energy_biller.h"
#include "faasd-shim/instances/instance_manager.h"

namespace faasnode::api {

inline constexpr std::string_view kDefaultNamespace = "openfaas-fn";

// `manager` (and `biller`, when not null) must outlive the handler. With a biller, every call
// is queued for its energy bill when it ends.
RouteHandler MakeInvokeHandler(const instances::InstanceManager* manager,
                               billing::EnergyBiller* biller = nullptr);

}  // namespace faasnode::api
