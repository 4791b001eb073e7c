// instrument.cc — counting around the invocation route.
#include "faasd-shim/metrics/instrument.h"

#include <cstdint>

#include "junction/sched/tsc.h"

namespace faasnode::metrics {

std::pair<std::string_view, std::string_view> SplitFunctionName(std::string_view name_ns) {
  const std::size_t dot = name_ns.rfind('.');
  if (dot == std::string_view::npos) return {name_ns, "openfaas-fn"};
  return {name_ns.substr(0, dot), name_ns.substr(dot + 1)};
}

InvokeRoute Instrument(InvokeRoute inner, GatewayMetrics* metrics, FunctionExists exists) {
  return [inner = std::move(inner), metrics, exists = std::move(exists)](
             const junction::http::Request& req, std::string_view rest, junction::http::Reply& reply) {
    const auto [name, ns] = SplitFunctionName(rest.substr(0, rest.find('/')));
    if (name.empty() || (exists && !exists(name, ns))) {
      inner(req, rest, reply);
      return;
    }
    metrics->Started(name, ns);
    // The TSC (invariant, valid across cores), not the monotonic clock: ~12 ns a read here
    // against ~30 for a vDSO clock_gettime, twice on every invocation.
    const std::uint64_t t0 = junction::sched::Rdtsc();
    inner(req, rest, reply);
    const double seconds = junction::sched::CyclesToNs(junction::sched::Rdtsc() - t0) * 1e-9;
    metrics->Finished(name, ns, reply.status, seconds);
  };
}

}  // namespace faasnode::metrics
