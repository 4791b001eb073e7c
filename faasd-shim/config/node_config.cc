// node_config.cc — TOML to NodeConfig with strict keys and one-line errors.
#include "faasd-shim/config/node_config.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace faasnode {
namespace {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

std::string TypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

auto Bad(std::string msg) { return MakeError(ErrorCode::kInvalidArgument, std::move(msg)); }

Status<std::int64_t> Integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) {
  auto v = n.value<std::int64_t>();
  if (!n.is_integer() || !v) return Bad(fmt::format("{}: expected an integer, got {}", key, TypeName(n)));
  if (*v < lo || *v > hi) return Bad(fmt::format("{}: {} is out of range [{}, {}]", key, *v, lo, hi));
  return *v;
}

Status<bool> Boolean(const toml::node& n, std::string_view key) {
  if (!n.is_boolean()) return Bad(fmt::format("{}: expected true or false, got {}", key, TypeName(n)));
  return *n.value<bool>();
}

Status<void> ParseRuntime(const toml::table& t, junction::sched::RuntimeConfig* rc) {
  for (const auto& [k, node] : t) {
    const std::string key = "runtime." + std::string(k.str());
    if (k == "cores") {
      const toml::array* arr = node.as_array();
      if (arr == nullptr) return Bad(fmt::format("{}: expected an array of CPU ids such as [0, 1], got {}", key, TypeName(node)));
      rc->cores.clear();
      for (const auto& e : *arr) {
        auto v = Integer(e, key, 0, 4095);
        if (!v) return std::unexpected(v.error());
        rc->cores.push_back(static_cast<int>(*v));
      }
    } else if (k == "stack_size_kib") {
      auto v = Integer(node, key, 0, 1 << 20);
      if (!v) return std::unexpected(v.error());
      rc->stack_size = static_cast<std::size_t>(*v) * 1024;
    } else if (k == "stack_guard") {
      auto v = Boolean(node, key);
      if (!v) return std::unexpected(v.error());
      rc->stack_guard = *v;
    } else if (k == "stack_cache") {
      auto v = Integer(node, key, 0, 1 << 24);
      if (!v) return std::unexpected(v.error());
      rc->stack_cache = static_cast<std::size_t>(*v);
    } else if (k == "stack_prealloc") {
      auto v = Integer(node, key, 0, 1 << 20);
      if (!v) return std::unexpected(v.error());
      rc->stack_prealloc = static_cast<std::size_t>(*v);
    } else if (k == "heap_prealloc_kib") {
      auto v = Integer(node, key, 0, 1 << 20);
      if (!v) return std::unexpected(v.error());
      rc->heap_prealloc = static_cast<std::size_t>(*v) * 1024;
    } else if (k == "idle_spin_us") {
      auto v = Integer(node, key, 0, 1'000'000);
      if (!v) return std::unexpected(v.error());
      rc->idle_spin_us = static_cast<std::uint32_t>(*v);
    } else if (k == "timer_spin_us") {
      auto v = Integer(node, key, 0, 10'000);
      if (!v) return std::unexpected(v.error());
      rc->timer_spin_us = static_cast<std::uint32_t>(*v);
    } else if (k == "poll_interval_us") {
      auto v = Integer(node, key, 1, 1'000'000);
      if (!v) return std::unexpected(v.error());
      rc->poll_interval_us = static_cast<std::uint32_t>(*v);
    } else if (k == "park_poll_us") {
      auto v = Integer(node, key, 0, 1'000);
      if (!v) return std::unexpected(v.error());
      rc->park_poll_us = static_cast<std::uint32_t>(*v);
    } else {
      return Bad(fmt::format("{}: unknown key (known in [runtime]: cores, stack_size_kib, "
                             "stack_guard, stack_cache, stack_prealloc, heap_prealloc_kib, idle_spin_us, timer_spin_us, "
                             "poll_interval_us, park_poll_us)", key));
    }
  }
  return {};
}

Status<std::string> String(const toml::node& n, std::string_view key) {
  if (!n.is_string()) return Bad(fmt::format("{}: expected a string, got {}", key, TypeName(n)));
  return std::string(*n.value<std::string_view>());
}

Status<void> ParseAsync(const toml::table& t, AsyncConfig* ac) {
  for (const auto& [k, node] : t) {
    const std::string key = "async." + std::string(k.str());
    Status<std::int64_t> v;
    if (k == "workers") {
      if (v = Integer(node, key, 1, 1024); v) ac->workers = static_cast<int>(*v);
    } else if (k == "callback_attempts") {
      if (v = Integer(node, key, 1, 100); v) ac->callback_attempts = static_cast<int>(*v);
    } else if (k == "callback_base_delay_ms") {
      if (v = Integer(node, key, 1, 3'600'000); v) ac->callback_base_delay = std::chrono::milliseconds(*v);
    } else if (k == "callback_timeout_ms") {
      if (v = Integer(node, key, 1, 3'600'000); v) ac->callback_timeout = std::chrono::milliseconds(*v);
    } else {
      return Bad(fmt::format("{}: unknown key (known in [async]: workers, callback_attempts, "
                             "callback_base_delay_ms, callback_timeout_ms)", key));
    }
    if (!v) return std::unexpected(v.error());
  }
  return {};
}

Status<void> ParseLogs(const toml::table& t, LogsConfig* lc) {
  for (const auto& [k, node] : t) {
    const std::string key = "logs." + std::string(k.str());
    Status<std::int64_t> v;
    if (k == "max_lines") {
      if (v = Integer(node, key, 1, 10'000'000); v) lc->max_lines = static_cast<std::size_t>(*v);
    } else if (k == "max_bytes") {
      if (v = Integer(node, key, 1, std::int64_t{1} << 32); v) lc->max_bytes = static_cast<std::size_t>(*v);
    } else {
      return Bad(fmt::format("{}: unknown key (known in [logs]: max_lines, max_bytes)", key));
    }
    if (!v) return std::unexpected(v.error());
  }
  return {};
}

Status<double> Number(const toml::node& n, std::string_view key, double lo, double hi);

Status<junction::net::Ipv4Addr> Address(const toml::node& n, std::string_view key) {
  auto v = String(n, key);
  if (!v) return std::unexpected(v.error());
  auto a = junction::net::Ipv4Addr::Parse(*v);
  if (!a) return Bad(fmt::format("{}: \"{}\" is not an IPv4 address like \"10.0.0.2\"", key, *v));
  return *a;
}

Status<void> ParseDpdkFaults(const toml::table& t, junction::net::DpdkFaultOptions* f) {
  for (const auto& [k, node] : t) {
    const std::string key = "net.dpdk.faults." + std::string(k.str());
    double* rate = k == "drop" ? &f->drop : k == "reorder" ? &f->reorder
                 : k == "duplicate" ? &f->duplicate : k == "delay" ? &f->delay : nullptr;
    if (rate != nullptr) {
      auto v = Number(node, key, 0, 1);
      if (!v) return std::unexpected(v.error());
      *rate = *v;
    } else if (k == "delay_us") {
      auto v = Integer(node, key, 1, 1'000'000);
      if (!v) return std::unexpected(v.error());
      f->delay_us = static_cast<std::uint32_t>(*v);
    } else if (k == "seed") {
      auto v = Integer(node, key, 0, INT64_MAX);
      if (!v) return std::unexpected(v.error());
      f->seed = static_cast<std::uint64_t>(*v);
    } else if (k == "rx" || k == "tx") {
      auto v = Boolean(node, key);
      if (!v) return std::unexpected(v.error());
      (k == "rx" ? f->rx : f->tx) = *v;
    } else {
      return Bad(fmt::format("{}: unknown key (known in [net.dpdk.faults]: drop, reorder, "
                             "duplicate, delay, delay_us, seed, rx, tx)", key));
    }
  }
  if (f->drop + f->reorder + f->duplicate + f->delay > 1.0) {
    return Bad("net.dpdk.faults: drop + reorder + duplicate + delay must be at most 1");
  }
  return {};
}

Status<void> ParseDpdk(const toml::table& t, junction::net::DpdkOptions* d) {
  for (const auto& [k, node] : t) {
    const std::string key = "net.dpdk." + std::string(k.str());
    if (k == "eal_args") {
      const toml::array* arr = node.as_array();
      if (arr == nullptr) return Bad(fmt::format("{}: expected an array of strings", key));
      d->eal_args.clear();
      for (const auto& e : *arr) {
        auto v = String(e, key);
        if (!v) return std::unexpected(v.error());
        d->eal_args.push_back(*v);
      }
    } else if (k == "hugepages") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      if (*v != "auto" && *v != "on" && *v != "off") {
        return Bad(fmt::format("{}: \"{}\": use \"auto\", \"on\" or \"off\"", key, *v));
      }
      d->hugepages = *v;
    } else if (k == "port") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      d->port = *v;
    } else if (k == "ip" || k == "gateway") {
      auto v = Address(node, key);
      if (!v) return std::unexpected(v.error());
      (k == "ip" ? d->ip : d->gateway) = *v;
    } else if (k == "prefix_len") {
      auto v = Integer(node, key, 1, 32);
      if (!v) return std::unexpected(v.error());
      d->prefix_len = static_cast<int>(*v);
    } else if (k == "rx_descriptors" || k == "tx_descriptors") {
      auto v = Integer(node, key, 64, 16384);
      if (!v) return std::unexpected(v.error());
      (k == "rx_descriptors" ? d->rx_descriptors : d->tx_descriptors) = static_cast<std::uint16_t>(*v);
    } else if (k == "burst") {
      auto v = Integer(node, key, 1, 64);
      if (!v) return std::unexpected(v.error());
      d->burst = static_cast<std::uint16_t>(*v);
    } else if (k == "arp_timeout_ms" || k == "arp_retry_ms") {
      auto v = Integer(node, key, 1, 3'600'000);
      if (!v) return std::unexpected(v.error());
      (k == "arp_timeout_ms" ? d->arp_timeout_ms : d->arp_retry_ms) = static_cast<std::uint32_t>(*v);
    } else if (k == "arp_retries") {
      auto v = Integer(node, key, 0, 100);
      if (!v) return std::unexpected(v.error());
      d->arp_retries = static_cast<std::uint32_t>(*v);
    } else if (k == "idle_poll_max_us") {
      auto v = Integer(node, key, 16, 1'000'000);
      if (!v) return std::unexpected(v.error());
      d->idle_poll_max_us = static_cast<std::uint32_t>(*v);
    } else if (k == "faults") {
      const toml::table* ft = node.as_table();
      if (ft == nullptr) return Bad(fmt::format("{}: expected a table [net.dpdk.faults]", key));
      if (auto s = ParseDpdkFaults(*ft, &d->faults); !s) return s;
    } else {
      return Bad(fmt::format("{}: unknown key (known in [net.dpdk]: eal_args, hugepages, port, ip, "
                             "prefix_len, gateway, rx_descriptors, tx_descriptors, burst, "
                             "arp_timeout_ms, arp_retry_ms, arp_retries, idle_poll_max_us, "
                             "[net.dpdk.faults])", key));
    }
  }
  return {};
}

Status<void> ParseNet(const toml::table& t, NetConfig* nc) {
  for (const auto& [k, node] : t) {
    const std::string key = "net." + std::string(k.str());
    if (k == "backend") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      if (*v != "kernel" && *v != "dpdk") {
        return Bad(fmt::format("{}: \"{}\" is not a backend; use \"kernel\" or \"dpdk\"", key, *v));
      }
      nc->backend = *v;
    } else if (k == "listen") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      const auto colon = v->rfind(':');
      if (colon == std::string::npos || colon + 1 == v->size()) {
        return Bad(fmt::format("{}: \"{}\" is not ADDRESS:PORT, e.g. \"127.0.0.1:8080\"", key, *v));
      }
      nc->listen = *v;
    } else if (k == "dpdk") {
      const toml::table* dt = node.as_table();
      if (dt == nullptr) return Bad(fmt::format("{}: expected a table [net.dpdk]", key));
      if (auto s = ParseDpdk(*dt, &nc->dpdk); !s) return s;
    } else if (k == "prime_connections") {
      auto v = Integer(node, key, 0, 1 << 16);
      if (!v) return std::unexpected(v.error());
      nc->prime_connections = static_cast<std::size_t>(*v);
    } else if (k == "prime_ring_kib") {
      auto v = Integer(node, key, 0, 1 << 20);
      if (!v) return std::unexpected(v.error());
      nc->prime_ring_bytes = static_cast<std::size_t>(*v) * 1024;
    } else {
      return Bad(fmt::format("{}: unknown key (known in [net]: backend, listen, prime_connections, "
                             "prime_ring_kib, [net.dpdk])", key));
    }
  }
  return {};
}

Status<void> ParseHttp(const toml::table& t, HttpConfig* hc) {
  for (const auto& [k, node] : t) {
    const std::string key = "http." + std::string(k.str());
    auto ms = [&](std::chrono::milliseconds* out) -> Status<void> {
      auto v = Integer(node, key, 1, 3'600'000);
      if (!v) return std::unexpected(v.error());
      *out = std::chrono::milliseconds(*v);
      return {};
    };
    Status<void> r;
    if (k == "max_header_bytes") {
      auto v = Integer(node, key, 1024, 1 << 20);
      if (!v) return std::unexpected(v.error());
      hc->max_header_bytes = static_cast<std::size_t>(*v);
    } else if (k == "max_header_count") {
      auto v = Integer(node, key, 8, 10'000);
      if (!v) return std::unexpected(v.error());
      hc->max_header_count = static_cast<std::size_t>(*v);
    } else if (k == "max_body_bytes") {
      auto v = Integer(node, key, 0, std::int64_t{1} << 32);
      if (!v) return std::unexpected(v.error());
      hc->max_body_bytes = static_cast<std::size_t>(*v);
    } else if (k == "read_timeout_ms") {
      r = ms(&hc->read_timeout);
    } else if (k == "write_timeout_ms") {
      r = ms(&hc->write_timeout);
    } else if (k == "idle_timeout_ms") {
      r = ms(&hc->idle_timeout);
    } else {
      return Bad(fmt::format("{}: unknown key (known in [http]: max_header_bytes, max_header_count, "
                             "max_body_bytes, read_timeout_ms, write_timeout_ms, idle_timeout_ms)", key));
    }
    if (!r) return r;
  }
  return {};
}

Status<double> Number(const toml::node& n, std::string_view key, double lo, double hi) {
  std::optional<double> v;
  if (n.is_floating_point()) v = n.value<double>();
  if (n.is_integer()) v = static_cast<double>(*n.value<std::int64_t>());
  if (!v) return Bad(fmt::format("{}: expected a number, got {}", key, TypeName(n)));
  if (!(*v >= lo && *v <= hi)) return Bad(fmt::format("{}: {} is out of range [{}, {}]", key, *v, lo, hi));
  return *v;
}

Status<void> ParseEnergy(const toml::table& t, EnergyConfig* ec) {
  for (const auto& [k, node] : t) {
    const std::string key = "energy." + std::string(k.str());
    if (k == "enabled" || k == "response_headers" || k == "share_idle" || k == "share_overhead") {
      auto v = Boolean(node, key);
      if (!v) return std::unexpected(v.error());
      (k == "enabled"            ? ec->enabled
       : k == "response_headers" ? ec->response_headers
       : k == "share_idle"       ? ec->share_idle
                                 : ec->share_overhead) = *v;
    } else if (k == "meter" || k == "gpu_meter") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      const bool cpu = k == "meter";
      if (*v != "auto" && *v != (cpu ? "rapl" : "nvml") && *v != (cpu ? "model" : "off")) {
        return Bad(fmt::format("{}: \"{}\" is not a meter; use {}", key, *v,
                               cpu ? "auto, rapl or model" : "auto, nvml or off"));
      }
      (cpu ? ec->meter : ec->gpu_meter) = *v;
    } else if (k == "interval_ms") {
      auto v = Integer(node, key, 1, 60'000);
      if (!v) return std::unexpected(v.error());
      ec->interval = std::chrono::milliseconds(*v);
    } else if (k == "ledger" || k == "carbon_trace") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      (k == "ledger" ? ec->ledger : ec->carbon_trace) = *v;
    } else if (k == "carbon_g_per_kwh") {
      auto v = Number(node, key, 0, 5000);
      if (!v) return std::unexpected(v.error());
      ec->carbon_g_per_kwh = *v;
    } else if (k == "carbon_gaps") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      if (*v != "hold" && *v != "interpolate") {
        return Bad(fmt::format("{}: \"{}\" is not a gap policy; use \"hold\" or \"interpolate\"", key, *v));
      }
      ec->carbon_gaps = *v;
    } else if (k == "embodied_g_per_core_second") {
      // 1 g per core-second is ~30 t a core-year: far above any server's embodied carbon.
      auto v = Number(node, key, 0, 1);
      if (!v) return std::unexpected(v.error());
      ec->embodied_g_per_core_second = *v;
    } else if (k == "idle_watts_per_core" || k == "max_watts_per_core") {
      auto v = Number(node, key, 0, 1000);
      if (!v) return std::unexpected(v.error());
      (k == "idle_watts_per_core" ? ec->idle_watts_per_core : ec->max_watts_per_core) = *v;
    } else {
      return Bad(fmt::format("{}: unknown key (known in [energy]: enabled, interval_ms, ledger, "
                             "carbon_g_per_kwh, carbon_trace, carbon_gaps, embodied_g_per_core_second, idle_watts_per_core, max_watts_per_core, "
                             "response_headers, meter, gpu_meter, share_idle, share_overhead)", key));
    }
  }
  if (ec->idle_watts_per_core > ec->max_watts_per_core) {
    return Bad("energy.idle_watts_per_core: above max_watts_per_core");
  }
  return {};
}

const char* const kSampleFunctions[] = {"echo", "hello", "json-stats", "sha256", "sleep", "cpu-burn",
                                        "swiglu-mlp"};

// Exec samples: name, fprocess.
const std::pair<const char*, const char*> kSampleExecFunctions[] = {
    {"cat", "cat"}, {"wc", "wc -l"}, {"sha512sum", "sha512sum"}};

Status<void> ParseFunction(const std::string& name, const toml::table& t, FunctionConfig* fc) {
  fc->name = name;
  fc->artifact = name;
  for (const auto& [k, node] : t) {
    const std::string key = "functions." + name + "." + std::string(k.str());
    if (k == "kind") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      if (*v != "native" && *v != "exec") {
        return Bad(fmt::format("{}: \"{}\" is not a kind; use \"native\" or \"exec\"", key, *v));
      }
      fc->kind = *v;
    } else if (k == "fprocess") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      fc->fprocess = *v;
    } else if (k == "combine_output") {
      auto v = Boolean(node, key);
      if (!v) return std::unexpected(v.error());
      fc->combine_output = *v;
    } else if (k == "exec_timeout_ms") {
      auto v = Integer(node, key, 0, 86'400'000);
      if (!v) return std::unexpected(v.error());
      fc->exec_timeout = std::chrono::milliseconds(*v);
    } else if (k == "memory_limit_mib") {
      auto v = Integer(node, key, 0, 1 << 20);
      if (!v) return std::unexpected(v.error());
      fc->memory_limit_mib = static_cast<std::uint64_t>(*v);
    } else if (k == "artifact") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      fc->artifact = *v;
    } else if (k == "replicas") {
      auto v = Integer(node, key, 1, 1024);
      if (!v) return std::unexpected(v.error());
      fc->replicas = static_cast<int>(*v);
    } else if (k == "max_inflight") {
      auto v = Integer(node, key, 0, 1'000'000);
      if (!v) return std::unexpected(v.error());
      fc->max_inflight = static_cast<int>(*v);
    } else if (k == "idle_timeout_ms") {
      auto v = Integer(node, key, 0, 86'400'000);
      if (!v) return std::unexpected(v.error());
      fc->idle_timeout = std::chrono::milliseconds(*v);
    } else if (k == "min_warm") {
      auto v = Integer(node, key, 0, 1024);
      if (!v) return std::unexpected(v.error());
      fc->min_warm = static_cast<int>(*v);
    } else if (k == "env") {
      const toml::table* env = node.as_table();
      if (env == nullptr) return Bad(fmt::format("{}: expected a table such as {{ KEY = \"value\" }}, got {}", key, TypeName(node)));
      for (const auto& [ek, ev] : *env) {
        auto v = String(ev, key + "." + std::string(ek.str()));
        if (!v) return std::unexpected(v.error());
        fc->env.emplace_back(std::string(ek.str()), *v);
      }
    } else {
      return Bad(fmt::format("{}: unknown key (known: kind, artifact, replicas, max_inflight, "
                             "idle_timeout_ms, min_warm, env, fprocess, combine_output, exec_timeout_ms, "
                             "memory_limit_mib)", key));
    }
  }
  if (fc->min_warm > fc->replicas) {
    return Bad(fmt::format("functions.{}.min_warm: {} instances kept warm is more than replicas = {} (the most "
                           "it may have)", name, fc->min_warm, fc->replicas));
  }
  if (!fc->fprocess.empty() && !t.contains("kind")) fc->kind = "exec";
  if (fc->kind == "exec" && fc->fprocess.find_first_not_of(' ') == std::string::npos) {
    return Bad(fmt::format("functions.{}.fprocess: an exec function needs the program to run, e.g. "
                           "fprocess = \"wc -l\"", name));
  }
  if (fc->kind == "native" && !fc->fprocess.empty()) {
    return Bad(fmt::format("functions.{}.fprocess: a native function has no fprocess; drop it or set "
                           "kind = \"exec\"", name));
  }
  return {};
}

Status<void> ParseFunctions(const toml::table& t, FunctionsConfig* fc) {
  bool declared = false;
  for (const auto& [k, node] : t) {
    const std::string key = "functions." + std::string(k.str());
    if (k == "store") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      fc->store_dir = *v;
    } else if (k == "exec_user" || k == "exec_tmp_dir") {
      auto v = String(node, key);
      if (!v) return std::unexpected(v.error());
      if (v->empty()) return Bad(fmt::format("{}: must not be empty", key));
      (k == "exec_user" ? fc->exec_user : fc->exec_tmp_dir) = *v;
    } else if (const toml::table* ft = node.as_table()) {
      if (!declared) fc->functions.clear();  // a declared set replaces the defaults
      declared = true;
      FunctionConfig f;
      if (auto s = ParseFunction(std::string(k.str()), *ft, &f); !s) return s;
      fc->functions.push_back(std::move(f));
    } else {
      return Bad(fmt::format("{}: expected \"store\", \"exec_user\", \"exec_tmp_dir\" or a "
                             "[functions.NAME] table, got {}", key, TypeName(node)));
    }
  }
  return {};
}

}  // namespace

NodeConfig DefaultNodeConfig() {
  NodeConfig c;
  c.runtime.cores = junction::sched::AllowedCpus();
  if (c.runtime.cores.empty()) c.runtime.cores = {0};
  c.functions.store_dir = FAASNODE_DEFAULT_FUNCTIONS_DIR;
  for (const char* name : kSampleFunctions) {
    FunctionConfig f;
    f.name = name;
    f.artifact = name;
    c.functions.functions.push_back(std::move(f));
  }
  for (const char* name : kSampleFunctions) c.images.emplace_back(fmt::format("faasnode/{}:latest", name), name);
  for (const auto& [name, fprocess] : kSampleExecFunctions) {
    FunctionConfig f;
    f.name = name;
    f.kind = "exec";
    f.fprocess = fprocess;
    c.functions.functions.push_back(std::move(f));
  }
  return c;
}

Status<NodeConfig> ParseNodeConfig(std::string_view toml_text, std::string_view origin) {
  NodeConfig config = DefaultNodeConfig();
  config.source = std::string(origin);
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return Bad(fmt::format("{}:{}:{}: not valid TOML: {}", origin, where.line, where.column, e.description()));
  }
  for (const auto& [k, node] : root) {
    if (k == "runtime") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("runtime: expected a table ([runtime]), got {}", TypeName(node)));
      if (auto s = ParseRuntime(*t, &config.runtime); !s) return std::unexpected(s.error());
    } else if (k == "energy") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("energy: expected a table ([energy]), got {}", TypeName(node)));
      if (auto s = ParseEnergy(*t, &config.energy); !s) return std::unexpected(s.error());
    } else if (k == "functions") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("functions: expected a table ([functions]), got {}", TypeName(node)));
      if (auto s = ParseFunctions(*t, &config.functions); !s) return std::unexpected(s.error());
    } else if (k == "state") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("state: expected a table ([state]), got {}", TypeName(node)));
      for (const auto& [sk, sv] : *t) {
        const std::string key = "state." + std::string(sk.str());
        if (sk == "dir") {
          auto v = String(sv, key);
          if (!v) return std::unexpected(v.error());
          if (v->empty()) return Bad(key + ": must not be empty");
          config.state.dir = *v;
        } else if (sk == "auth") {
          const auto* b = sv.as_boolean();
          if (b == nullptr) return Bad(fmt::format("{}: expected true or false, got {}", key, TypeName(sv)));
          config.state.auth = b->get();
        } else {
          return Bad(fmt::format("{}: unknown key (known in [state]: dir, auth)", key));
        }
      }
    } else if (k == "images") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("images: expected a table ([images]), got {}", TypeName(node)));
      config.images.clear();  // a declared map replaces the defaults
      for (const auto& [ik, iv] : *t) {
        auto v = String(iv, "images.\"" + std::string(ik.str()) + "\"");
        if (!v) return std::unexpected(v.error());
        config.images.emplace_back(std::string(ik.str()), *v);
      }
    } else if (k == "async" || k == "logs") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("{}: expected a table ([{}]), got {}", k.str(), k.str(), TypeName(node)));
      auto s = k == "async" ? ParseAsync(*t, &config.async) : ParseLogs(*t, &config.logs);
      if (!s) return std::unexpected(s.error());
    } else if (k == "net" || k == "http") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return Bad(fmt::format("{}: expected a table ([{}]), got {}", k.str(), k.str(), TypeName(node)));
      auto s = k == "net" ? ParseNet(*t, &config.net) : ParseHttp(*t, &config.http);
      if (!s) return std::unexpected(s.error());
    } else {
      return Bad(fmt::format("{}: unknown section or key (known: [runtime], [net], [http], [functions], [energy], [state], [images], [async], [logs])", k.str()));
    }
  }
  if (auto v = junction::sched::ValidateRuntimeConfig(config.runtime); !v) return std::unexpected(v.error());
  return config;
}

Status<NodeConfig> LoadNodeConfig(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("config file {} cannot be read: {}; pass an existing file to --config",
                                 path, std::strerror(errno)));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseNodeConfig(ss.str(), path);
}

}  // namespace faasnode
