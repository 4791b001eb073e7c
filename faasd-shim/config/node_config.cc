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
    } else {
      return Bad(fmt::format("{}: unknown key (known in [runtime]: cores, stack_size_kib, "
                             "stack_guard, stack_cache, idle_spin_us, timer_spin_us, "
                             "poll_interval_us)", key));
    }
  }
  return {};
}

}  // namespace

NodeConfig DefaultNodeConfig() {
  NodeConfig c;
  c.runtime.cores = junction::sched::AllowedCpus();
  if (c.runtime.cores.empty()) c.runtime.cores = {0};
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
    } else {
      return Bad(fmt::format("{}: unknown section or key (known: [runtime])", k.str()));
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
