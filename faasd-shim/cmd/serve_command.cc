// serve_command.cc — `faasnode serve`: today the runtime only; the HTTP node is not built yet.
#include "faasd-shim/cmd/serve_command.h"

#include <spdlog/spdlog.h>

#include <string>

#include "faasd-shim/config/node_config.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace faasnode {

int RunServe(const ServeOptions& options) {
  auto config = options.config_path.empty() ? junction::Status<NodeConfig>(DefaultNodeConfig())
                                            : LoadNodeConfig(options.config_path);
  if (!config) {
    spdlog::error("{}", config.error().message());
    return 2;
  }
  auto rt = junction::sched::Runtime::Create(config->runtime);
  if (!rt) {
    spdlog::error("{}", rt.error().message());
    return rt.error().code() == junction::ErrorCode::kInvalidArgument ? 2 : 1;
  }
  std::string cpus;
  for (int c : config->runtime.cores) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
  auto ran = (*rt)->Run([&] {
    spdlog::info("faasnode: runtime up on {} core(s) (CPUs {}), {} KiB stacks, config: {}",
                 config->runtime.cores.size(), cpus, config->runtime.stack_size / 1024, config->source);
    junction::sched::SleepFor(std::chrono::milliseconds(100));
    auto snap = (*rt)->CloseInterval();
    if (snap) {
      for (const auto& c : snap->cores) {
        spdlog::info("core {} (CPU {}): {:.1f} ms accounted, {:.1f}% idle", c.core, c.cpu,
                     c.elapsed() * 1e3 / snap->tsc_hz,
                     c.elapsed() ? 100.0 * static_cast<double>(c.idle) / static_cast<double>(c.elapsed()) : 0.0);
      }
    }
  });
  if (!ran) {
    spdlog::error("{}", ran.error().message());
    return 1;
  }
  spdlog::warn("faasnode: not built yet — the network stack (junction/net), the HTTP server, "
               "function instances and the OpenFaaS API; nothing is served, so serve stops here");
  return 0;
}

}  // namespace faasnode
