// instance_manager.cc — deploying functions into pools and reaping idle instances.
#include "faasd-shim/instances/instance_manager.h"

#include <fmt/format.h>

namespace faasnode::instances {

using junction::ErrorCode;
using junction::MakeError;

InstanceManager::~InstanceManager() { StopReaper(); }

junction::Status<void> InstanceManager::Deploy(Deployment d) {
  if (frozen_) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("deploying {}: the node's function set is fixed once it serves", d.name));
  }
  if (auto v = store::FunctionStore::ValidateName(d.name); !v) return std::unexpected(v.error());
  if (pools_.contains(d.name)) {
    return MakeError(ErrorCode::kAlreadyExists, fmt::format("function {} is declared twice; give each a unique name", d.name));
  }
  if (d.pool.replicas < 1) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("function {}: replicas must be at least 1", d.name));
  }
  if (d.factory) {
    std::string name = d.name;
    pools_.emplace(name, std::make_unique<FunctionPool>(std::move(d.name), std::move(d.factory), std::move(d.pool)));
    return {};
  }
  if (d.artifact.empty()) d.artifact = d.name;
  auto fn = store_->Load(d.artifact);
  if (!fn) {
    return MakeError(fn.error().code(), fmt::format("function {}: {}", d.name, fn.error().message()));
  }
  std::string name = d.name;
  pools_.emplace(name, std::make_unique<FunctionPool>(std::move(d.name), std::move(*fn), std::move(d.pool)));
  return {};
}

FunctionPool* InstanceManager::Find(std::string_view name) const {
  auto it = pools_.find(name);
  return it == pools_.end() ? nullptr : it->second.get();
}

std::vector<std::string> InstanceManager::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, pool] : pools_) out.push_back(name);
  return out;
}

junction::Status<void> InstanceManager::StartReaper(junction::sched::Clock::duration period) {
  stop_reaper_.store(false);
  auto h = junction::sched::Spawn([this, period] {
    reaper_ref_ = junction::sched::Self();
    while (!stop_reaper_.load(std::memory_order_acquire)) {
      junction::sched::ParkUntil(junction::sched::Clock::now() + period);
      const auto now = junction::sched::Clock::now();
      for (auto& [name, pool] : pools_) pool->ReapIdle(now);
    }
  });
  if (!h) return std::unexpected(h.error());
  reaper_ = std::move(*h);
  return {};
}

void InstanceManager::StopReaper() {
  if (!reaper_.joinable()) return;
  stop_reaper_.store(true, std::memory_order_release);
  while (reaper_ref_ == nullptr) junction::sched::Yield();
  junction::sched::Unpark(reaper_ref_);
  reaper_.Join();
}

}  // namespace faasnode::instances
