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
#include "faasd-shim/api/healthz.h"
#include "faasd-shim/api/invoke.h"
#include "faasd-shim/api/router.h"
#include "faasd-shim/config/node_config.h"
#include "faasd-shim/exec/exec_function.h"
#include "faasd-shim/instances/instance_manager.h"
#include "faasd-shim/store/function_store.h"
#include "junction/http/server/server.h"
#include "junction/net/stack.h"
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
  auto stack = junction::net::CreateStack(config.net.backend);
  if (!stack) {
    spdlog::error("net.backend = \"{}\": {}", config.net.backend, stack.error().message());
    return 1;
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
  instances::InstanceManager manager(store->get());
  for (const FunctionConfig& f : config.functions.functions) {
    instances::PoolOptions pool;
    pool.replicas = f.replicas;
    pool.max_inflight = f.max_inflight;
    pool.idle_timeout = f.idle_timeout;
    pool.env.vars = f.env;
    instances::InstanceFactory factory;
    if (f.kind == "exec") {
      exec::ExecSpec spec;
      spec.name = f.name;
      spec.fprocess = f.fprocess;
      spec.env = f.env;
      spec.combine_output = f.combine_output;
      spec.exec_timeout = f.exec_timeout;
      spec.limits.memory_bytes = f.memory_limit_mib << 20;
      spec.user = config.functions.exec_user;
      spec.tmp_root = config.functions.exec_tmp_dir;
      auto fn = exec::ExecFunction::Create(std::move(spec));
      if (!fn) {
        spdlog::error("functions.{}: {}", f.name, fn.error().message());
        return 2;
      }
      factory = [fn = std::move(*fn)] { return fn->NewInstance(); };
    }
    instances::Deployment deployment;
    deployment.name = f.name;
    deployment.artifact = f.artifact;
    deployment.pool = std::move(pool);
    deployment.factory = std::move(factory);
    if (auto d = manager.Deploy(std::move(deployment)); !d) {
      spdlog::error("{}", d.error().message());
      return 2;
    }
  }
  if (auto r = manager.StartReaper(std::chrono::seconds(1)); !r) {
    spdlog::error("{}", r.error().message());
    return 1;
  }
  std::unique_ptr<billing::EnergyBiller> biller;
  if (config.energy.enabled) {
    billing::BillingOptions bo;
    bo.interval = config.energy.interval;
    bo.ledger_path = config.energy.ledger;
    bo.carbon_g_per_kwh = config.energy.carbon_g_per_kwh;
    bo.carbon_trace = config.energy.carbon_trace;
    bo.model.idle_per_core = energy::Watts{config.energy.idle_watts_per_core};
    bo.model.max_per_core = energy::Watts{config.energy.max_watts_per_core};
    bo.response_headers = config.energy.response_headers;
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
  router.Prefix("/function/", api::MakeInvokeHandler(&manager, biller.get()));
  junction::http::ServerOptions options;
  options.parser.max_header_bytes = config.http.max_header_bytes;
  options.parser.max_header_count = config.http.max_header_count;
  options.parser.max_body_bytes = config.http.max_body_bytes;
  options.read_timeout = config.http.read_timeout;
  options.write_timeout = config.http.write_timeout;
  options.idle_timeout = config.http.idle_timeout;
  auto server = junction::http::Server::Start(**stack, *endpoint, router.Handler(), options);
  if (!server) {
    spdlog::error("listening on {}: {}", config.net.listen, server.error().message());
    if (biller) (void)biller->Stop();
    manager.StopReaper();
    return 1;
  }
  const auto local = (*server)->local_endpoint();
  spdlog::info("faasnode: serving http://{} on the {} backend, {} core(s); functions: {}",
               local.ToString(), (*stack)->name(), rt.num_cores(), fmt::join(manager.Names(), ", "));
  spdlog::info("try: curl -s http://{}/function/echo -d 'hello'", local.ToString());

  signals.Start(junction::sched::Self());
  while (signals.signal() == 0) junction::sched::Park();
  spdlog::info("faasnode: signal {} received; draining", signals.signal());
  (*server)->Shutdown(std::chrono::seconds(5));
  const auto st = (*server)->stats();
  server->reset();
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
