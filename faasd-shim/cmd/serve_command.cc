// serve_command.cc — `faasnode serve`: runtime, network stack, functions, HTTP server; runs
// until SIGINT or SIGTERM, then drains.
#include "faasd-shim/cmd/serve_command.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <fmt/ranges.h>
#include <string>
#include <thread>

#include "faasd-shim/billing/energy_biller.h"
#include "faasd-shim/billing/energy_metrics.h"
#include "faasd-shim/api/healthz.h"
#include "faasd-shim/api/system_carbon.h"
#include "faasd-shim/api/system_deployer.h"
#include "faasd-shim/api/system_function.h"
#include "faasd-shim/api/system_functions.h"
#include "faasd-shim/api/system_info.h"
#include "faasd-shim/api/system_namespace.h"
#include "faasd-shim/api/system_namespaces.h"
#include "faasd-shim/api/system_scale.h"
#include "faasd-shim/api/system_secrets.h"
#include "faasd-shim/auth/basic_auth.h"
#include "faasd-shim/state/secret_store.h"
#include "faasd-shim/state/state_db.h"
#include "faasd-shim/api/invoke.h"
#include "faasd-shim/api/router.h"
#include "faasd-shim/api/async_invoke.h"
#include "faasd-shim/api/metrics.h"
#include "faasd-shim/api/system_logs.h"
#include "faasd-shim/async/async_queue.h"
#include "faasd-shim/logs/log_store.h"
#include "faasd-shim/metrics/cold_start_metrics.h"
#include "faasd-shim/metrics/gateway_metrics.h"
#include "faasd-shim/metrics/instrument.h"
#include "faasd-shim/metrics/registry.h"
#include "faasd-shim/metrics/runtime_metrics.h"
#include "faasd-shim/config/node_config.h"
#include "faasd-shim/exec/exec_function.h"
#include "faasd-shim/instances/instance_manager.h"
#include "faasd-shim/store/function_store.h"
#include "junction/http/client/client.h"
#include "junction/http/server/server.h"
#include "junction/net/stack.h"
#ifdef FAASNODE_HAVE_DPDK
#include "junction/net/dpdk/dpdk_stack.h"
#endif
#include "junction/sched/heap_prealloc.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace faasnode {
namespace {

// Waits for SIGINT/SIGTERM on a plain thread (they are blocked everywhere else) and wakes
// the serving uthread.
class SignalWaiter {
 public:
  SignalWaiter() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);  // before the runtime's threads exist
  }
  void Start(junction::sched::ThreadRef waiter) {
    thread_ = std::thread([this, waiter] {
      int sig = 0;
      sigwait(&set_, &sig);
      signal_.store(sig, std::memory_order_release);
      junction::sched::Unpark(waiter);
    });
  }
  int signal() const { return signal_.load(std::memory_order_acquire); }
  ~SignalWaiter() {
    if (thread_.joinable()) {
      if (signal() == 0) pthread_kill(thread_.native_handle(), SIGTERM);
      thread_.join();
    }
  }

 private:
  sigset_t set_;
  std::atomic<int> signal_{0};
  std::thread thread_;
};

int Serve(const NodeConfig& config, junction::sched::Runtime& rt, SignalWaiter& signals) {
#ifdef FAASNODE_HAVE_DPDK
  junction::net::dpdk::RegisterDpdkStack();
#endif
  junction::net::StackOptions stack_options;
  stack_options.dpdk = config.net.dpdk;
  auto stack = junction::net::CreateStack(config.net.backend, stack_options);
  if (!stack) {
    spdlog::error("net.backend = \"{}\": {}", config.net.backend, stack.error().message());
    return 1;
  }
  if (config.net.prime_connections > 0) {
    // The first burst's TCP rings ready before the first request (no-op on the kernel stack).
    if (auto r = stack->get()->PrimeConnections(config.net.prime_connections, config.net.prime_ring_bytes);
        !r) {
      spdlog::warn("net.prime_connections = {}: readying TCP rings failed ({}); continuing, the "
                   "first connections will map their rings in themselves",
                   config.net.prime_connections, r.error().message());
    }
  }
  auto endpoint = junction::net::Endpoint::Parse(config.net.listen);
  if (!endpoint) {
    spdlog::error("net.listen: {}", endpoint.error().message());
    return 2;
  }
  auto store = store::FunctionStore::Open(config.functions.store_dir);
  if (!store) {
    spdlog::error("functions.store: {}", store.error().message());
    return 2;
  }
  // Every deployment's log lines (/system/logs). Made before the pools that write into it, so
  // it outlives them (an instance's fini may still log).
  logs::LogStore log_store({.max_lines = config.logs.max_lines, .max_bytes = config.logs.max_bytes});
  // The client functions' outbound HTTP calls go through (SDK v3 http_request), over the
  // node's own stack; made after the stack and before the pools, so it goes after them and
  // before the stack.
  junction::http::Client http_client(stack->get());
  instances::InstanceManager manager(store->get(), &http_client);
  // The durable state: deployments, namespaces, secrets, and the basic-auth files.
  auto state_db = state::StateDb::Open(config.state.dir);
  if (!state_db) {
    spdlog::error("state.dir: {}", state_db.error().message());
    return state_db.error().code() == junction::ErrorCode::kInvalidArgument ? 2 : 1;
  }
  auto credentials = auth::LoadOrCreateCredentials(config.state.dir);
  if (!credentials) {
    spdlog::error("state.dir: {}", credentials.error().message());
    return 1;
  }
  state::SecretStore secret_store(state_db->get());
  api::DeployerOptions deployer_options;
  for (const auto& [image, artifact] : config.images) {
    if (auto v = store::FunctionStore::ValidateName(artifact); !v) {
      spdlog::error("images.\"{}\": {}", image, v.error().message());
      return 2;
    }
    deployer_options.images[image] = artifact;
  }
  deployer_options.exec_user = config.functions.exec_user;
  deployer_options.exec_tmp_dir = config.functions.exec_tmp_dir;
  deployer_options.log_store = &log_store;
  api::SystemDeployer deployer(&manager, state_db->get(), &secret_store, std::move(deployer_options));
  auto restored = deployer.Restore();
  if (!restored) {
    spdlog::error("state: {}", restored.error().message());
    return 1;
  }
  // The config's functions are deployed once, on the first start with this state dir; from
  // then on the state dir is the truth (the API may change or remove them).
  auto seeded = (*state_db)->GetMeta("seeded");
  if (!seeded) {
    spdlog::error("state: {}", seeded.error().message());
    return 1;
  }
  if (!seeded->has_value()) {
    for (const FunctionConfig& f : config.functions.functions) {
      state::FunctionSpec spec;
      spec.service = f.name;
      spec.ns = std::string(state::kDefaultNamespace);
      spec.image = fmt::format("faasnode/{}:latest", f.kind == "exec" ? f.name : f.artifact);
      for (const auto& [k, v] : f.env) spec.env_vars[k] = v;
      if (f.replicas > 1) spec.labels["com.openfaas.scale.max"] = std::to_string(f.replicas);
      if (f.min_warm > 0) spec.labels["com.openfaas.scale.min"] = std::to_string(f.min_warm);
      // Cold on first use and after each scale to zero (idle_timeout_ms), unless min_warm
      // keeps some warm: the config's functions are not the API's (which start one warm).
      spec.start_cold = true;
      spec.max_inflight = f.max_inflight;
      spec.idle_timeout_ms = f.idle_timeout.count();
      if (f.kind == "exec") {
        spec.env_process = f.fprocess;
        spec.exec_timeout_ms = f.exec_timeout.count();
        spec.combine_output = f.combine_output;
        if (f.memory_limit_mib > 0) spec.limits = state::FunctionResources{fmt::format("{}Mi", f.memory_limit_mib), ""};
      } else {
        spec.kind = "native";
        spec.artifact = f.artifact.empty() ? f.name : f.artifact;
      }
      if (auto d = deployer.Create(std::move(spec)); !d && d.error().code() != junction::ErrorCode::kAlreadyExists) {
        spdlog::error("functions.{}: {}", f.name, d.error().message());
        return 2;
      }
    }
    if (auto m = (*state_db)->SetMeta("seeded", "1"); !m) {
      spdlog::error("state: {}", m.error().message());
      return 1;
    }
  }
  if (auto r = manager.StartReaper(std::chrono::seconds(1)); !r) {
    spdlog::error("{}", r.error().message());
    return 1;
  }
  // The biller (when on) closes the runtime's intervals: it hands each to the cycle metrics,
  // and each billed row to the energy series of /metrics.
  metrics::CycleTotals cycle_totals(rt.num_cores());
  billing::EnergyTotals energy_totals;
  std::unique_ptr<billing::EnergyBiller> biller;
  if (config.energy.enabled) {
    billing::BillingOptions bo;
    bo.interval = config.energy.interval;
    bo.ledger_path = config.energy.ledger;
    bo.carbon_g_per_kwh = config.energy.carbon_g_per_kwh;
    bo.carbon_trace = config.energy.carbon_trace;
    bo.carbon_gaps = config.energy.carbon_gaps == "hold" ? energy::carbon::GapPolicy::kHold
                                                         : energy::carbon::GapPolicy::kInterpolate;
    bo.embodied_g_per_core_second = config.energy.embodied_g_per_core_second;
    bo.model.idle_per_core = energy::Watts{config.energy.idle_watts_per_core};
    bo.model.max_per_core = energy::Watts{config.energy.max_watts_per_core};
    bo.on_interval = [&cycle_totals](const junction::sched::IntervalSnapshot& s) { cycle_totals.Observe(s); };
    bo.on_bills = [&energy_totals](std::span<const energy::InvocationRecord> rows) { energy_totals.Add(rows); };
    bo.response_headers = config.energy.response_headers;
    bo.attribution.idle = config.energy.share_idle ? energy::SharePolicy::kShareToInvocations
                                                   : energy::SharePolicy::kReportApart;
    bo.attribution.overhead = config.energy.share_overhead ? energy::SharePolicy::kShareToInvocations
                                                           : energy::SharePolicy::kReportApart;
    bo.meter = config.energy.meter == "rapl"    ? billing::MeterChoice::kRapl
               : config.energy.meter == "model" ? billing::MeterChoice::kModel
                                                : billing::MeterChoice::kAuto;
    bo.gpu = config.energy.gpu_meter == "nvml"  ? billing::GpuMeterChoice::kNvml
             : config.energy.gpu_meter == "off" ? billing::GpuMeterChoice::kOff
                                                : billing::GpuMeterChoice::kAuto;
    auto b = billing::EnergyBiller::Start(&rt, bo);
    if (!b) {
      spdlog::error("energy: {}", b.error().message());
      manager.StopReaper();
      return b.error().code() == junction::ErrorCode::kInvalidArgument ? 2 : 1;
    }
    biller = std::move(*b);
    spdlog::info("energy: billing every invocation to {} (meter: {}; {})", config.energy.ledger,
                 biller->meter_description(),
                 config.energy.carbon_trace.empty() ? fmt::format("{} gCO2e/kWh", config.energy.carbon_g_per_kwh)
                                                    : config.energy.carbon_trace);
  }
  api::Router router;
  router.Exact("/healthz", api::MakeHealthzHandler());
  // The OpenFaaS system API, behind basic auth as the gateway puts it (openfaas-api.md 1.3).
  const auth::Credentials* creds = &*credentials;
  auto guarded = [&](api::RouteHandler h) {
    return config.state.auth ? auth::RequireBasicAuth(creds, std::move(h)) : h;
  };
  router.Exact("/system/functions", guarded(api::MakeSystemFunctionsHandler(&deployer)));
  router.Prefix("/system/function/", guarded(api::MakeSystemFunctionHandler(&deployer)));
  router.Prefix("/system/scale-function/", guarded(api::MakeSystemScaleHandler(&deployer)));
  router.Exact("/system/info", guarded(api::MakeSystemInfoHandler({FAASNODE_VERSION, FAASNODE_GIT_SHA})));
  router.Exact("/system/secrets", guarded(api::MakeSystemSecretsHandler(&deployer)));
  router.Exact("/system/namespaces", guarded(api::MakeSystemNamespacesHandler(&deployer)));
  router.Prefix("/system/namespace/", guarded(api::MakeSystemNamespaceHandler(&deployer)));
  router.Exact("/system/carbon",
               guarded(api::MakeSystemCarbonHandler(config.energy.enabled ? config.energy.ledger : "")));
  // /metrics: the gateway's invocation series (counted per core around the invoke route) and
  // the node's runtime, network and HTTP counters. No auth, as faasd's provider serves it.
  metrics::GatewayMetrics gateway_metrics(rt.num_cores(), [&deployer] {
    std::vector<metrics::ServiceCount> out;
    for (const std::string& ns : deployer.Namespaces()) {
      for (const api::DeployedSpec& f : deployer.List(ns)) {
        out.push_back({f.spec.service + "." + f.spec.ns, f.pool ? static_cast<double>(f.pool->stats().instances) : 0});
      }
    }
    return out;
  });
  std::unique_ptr<junction::http::Server>* served = nullptr;  // set once the server runs
  metrics::Registry registry;
  registry.Add([&gateway_metrics](metrics::MetricWriter& w) { gateway_metrics.Collect(w); });
  registry.Add(metrics::MakeRuntimeCollector(
      {.runtime = &rt,
       .cycles = &cycle_totals,  // with billing on, its sampler closes the intervals (on_interval)
       .net = &(*stack)->counters(),
       .http = [&served] { return served && *served ? (*served)->stats() : junction::http::ServerStats{}; },
       .before_scrape = [&rt, &cycle_totals, billing = biller != nullptr] {
         if (!billing) (void)cycle_totals.CloseAndObserve(&rt);
       }}));
  // Cold starts that calls waited for, per deployed function (the pools count them).
  registry.Add(metrics::MakeColdStartCollector([&deployer] {
    std::vector<metrics::ColdStartSeries> out;
    for (const std::string& ns : deployer.Namespaces()) {
      for (const api::DeployedSpec& f : deployer.List(ns)) {
        if (!f.pool) continue;
        const instances::ColdStartHistogram h = f.pool->stats().call_cold_starts;
        out.push_back({f.spec.service + "." + f.spec.ns, instances::kColdStartBounds,
                       {h.cumulative.begin(), h.cumulative.end()}, h.count, static_cast<double>(h.ns_total) * 1e-9});
      }
    }
    return out;
  }));
  if (biller) {
    registry.Add([&energy_totals, b = biller.get()](metrics::MetricWriter& w) {
      energy_totals.Collect(w);
      billing::CollectBillerCounters(b->counters(), w);  // ledger overflow, spills, crash losses
    });
  }
  router.Exact("/metrics", api::MakeMetricsHandler(&registry));
  const metrics::InvokeRoute invoke = metrics::Instrument(
      api::MakeInvokeHandler(&manager, biller.get()), &gateway_metrics,
      [&manager](std::string_view name, std::string_view ns) { return manager.Contains(name, ns); });
  router.Prefix("/function/", invoke);
  // /async-function: durable queue in the state dir, run through the same invoke route.
  async::AsyncOptions async_options;
  async_options.db_path = config.state.dir + "/async.db";
  async_options.workers = config.async.workers;
  async_options.callback_attempts = config.async.callback_attempts;
  async_options.callback_base_delay = config.async.callback_base_delay;
  async_options.callback_timeout = config.async.callback_timeout;
  auto queue = async::AsyncQueue::Open(async_options, invoke, stack->get());
  if (!queue) {
    spdlog::error("async: {}", queue.error().message());
    if (biller) (void)biller->Stop();
    manager.StopReaper();
    return queue.error().code() == junction::ErrorCode::kInvalidArgument ? 2 : 1;
  }
  router.Prefix("/async-function/", api::MakeAsyncInvokeHandler(queue->get(), "faasnode/" FAASNODE_VERSION));
  // /system/logs: the function log rings, behind basic auth like the other /system routes.
  router.Exact("/system/logs", guarded(api::MakeSystemLogsHandler(&log_store)));
  junction::http::ServerOptions options;
  options.parser.max_header_bytes = config.http.max_header_bytes;
  options.parser.max_header_count = config.http.max_header_count;
  options.parser.max_body_bytes = config.http.max_body_bytes;
  options.read_timeout = config.http.read_timeout;
  options.write_timeout = config.http.write_timeout;
  options.idle_timeout = config.http.idle_timeout;
  // Start-up allocated megabytes on core 0's heap (SQLite caches, the router); top every
  // core's heap up now, so the first burst of connections does not fault it in page by page.
  if (auto pregrown = junction::sched::PregrowCoreHeaps(); !pregrown) {
    spdlog::warn("runtime.heap_prealloc_kib: growing the cores' heaps failed ({}); continuing",
                 pregrown.error().message());
  }
  auto server = junction::http::Server::Start(**stack, *endpoint, router.Handler(), options);
  if (!server) {
    spdlog::error("listening on {}: {}", config.net.listen, server.error().message());
    if (biller) (void)biller->Stop();
    manager.StopReaper();
    return 1;
  }
  served = &*server;
  if (auto s = (*queue)->Start(); !s) {
    spdlog::error("async: {}", s.error().message());
    return 1;
  }
  const auto local = (*server)->local_endpoint();
  spdlog::info("faasnode: serving http://{} on the {} backend, {} core(s); functions: {}",
               local.ToString(), (*stack)->name(), rt.num_cores(), fmt::join(manager.Names(), ", "));
  spdlog::info("try: curl -s http://{}/function/echo -d 'hello'", local.ToString());
  if (config.state.auth) {
    spdlog::info("system API: cat {}/basic-auth-password | faas-cli login -g http://{} -u admin --password-stdin",
                 config.state.dir, local.ToString());
  }

  signals.Start(junction::sched::Self());
  while (signals.signal() == 0) junction::sched::Park();
  spdlog::info("faasnode: signal {} received; draining", signals.signal());
  (*server)->Shutdown(std::chrono::seconds(5));
  const auto st = (*server)->stats();
  served = nullptr;
  server->reset();
  (*queue)->Stop();  // the workers' current calls finish; what is not done stays queued
  if (biller) {
    if (auto s = biller->Stop(); !s) spdlog::warn("energy: {}", s.error().message());
    spdlog::info("energy: {} interval(s) billed; report: faasnode carbon report --ledger {}", biller->intervals(),
                 config.energy.ledger);
  }
  manager.StopReaper();
  stack->reset();
  spdlog::info("faasnode: stopped after {} request(s) on {} connection(s)", st.requests, st.connections_accepted);
  return 0;
}

}  // namespace

int RunServe(const ServeOptions& options) {
  auto config = options.config_path.empty() ? junction::Status<NodeConfig>(DefaultNodeConfig())
                                            : LoadNodeConfig(options.config_path);
  if (!config) {
    spdlog::error("{}", config.error().message());
    return 2;
  }
  SignalWaiter signals;
  auto rt = junction::sched::Runtime::Create(config->runtime);
  if (!rt) {
    spdlog::error("{}", rt.error().message());
    return rt.error().code() == junction::ErrorCode::kInvalidArgument ? 2 : 1;
  }
  int rc = 0;
  auto ran = (*rt)->Run([&] { rc = Serve(*config, **rt, signals); });
  if (!ran) {
    spdlog::error("{}", ran.error().message());
    return 1;
  }
  return rc;
}

}  // namespace faasnode
