// instance_manager.cc — the published function set, run-time changes, and the reaper.
#include "faasd-shim/instances/instance_manager.h"

#include <fmt/format.h>

#include "junction/sched/runtime.h"

namespace faasnode::instances {

using junction::ErrorCode;
using junction::MakeError;

using junction::Status;

namespace {

// Generations are unique across managers, so a kthread's cache can never mistake another
// manager's snapshot for the current one.
std::atomic<std::uint64_t> g_generation{0};

struct CachedSnapshot {
  const void* owner = nullptr;
  std::uint64_t generation = 0;
  std::shared_ptr<const void> snapshot;
  // The last function Find/Contains hit in `snapshot` (a pool it holds anyway): a run of calls
  // to one function (the usual case) skips the two map walks and the snapshot's refcount.
  std::string last_ns, last_name;
  std::shared_ptr<FunctionPool> last_pool;
};
thread_local CachedSnapshot t_cache;

Status<void> ValidateNamespace(std::string_view ns) {
  if (auto v = store::FunctionStore::ValidateName(ns); !v) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("namespace {}: {}", ns, v.error().message()));
  }
  return {};
}

}  // namespace

InstanceManager::InstanceManager(store::FunctionStore* store, junction::http::Client* http)
    : store_(store), http_(http) {
  snapshot_.store(std::make_shared<const Snapshot>());
  generation_.store(g_generation.fetch_add(1) + 1);
}

InstanceManager::~InstanceManager() {
  StopReaper();
  DropCachedSnapshots();
}

// A kthread's cache may hold this manager's last snapshot, and through it the pools: left
// there, they would be finalised at kthread exit, after what their instances log into and
// were loaded from is gone. Each core drops its own cache (thread-local: only its kthread may).
void InstanceManager::DropCachedSnapshots() {
  auto drop = [this] {
    if (t_cache.owner == this) t_cache = CachedSnapshot{};
  };
  junction::sched::Runtime* rt = junction::sched::Runtime::Current();
  if (rt == nullptr || !junction::sched::InRuntime()) {
    drop();
    return;
  }
  std::vector<junction::sched::JoinHandle> on_cores;
  for (int c = 0; c < rt->num_cores(); ++c) {
    auto h = junction::sched::Spawn([drop] { drop(); }, {.core = c, .stealable = false});
    if (h) on_cores.push_back(std::move(*h));
  }
  for (auto& h : on_cores) h.Join();
  drop();
}

std::shared_ptr<const InstanceManager::Snapshot> InstanceManager::Current() const {
  const std::uint64_t gen = generation_.load(std::memory_order_acquire);
  if (t_cache.owner == this && t_cache.generation == gen) {
    return std::static_pointer_cast<const Snapshot>(t_cache.snapshot);
  }
  // Read the generation before the snapshot: a change in between leaves a newer snapshot
  // under an older number, which only costs one more re-read next time.
  std::shared_ptr<const Snapshot> s = snapshot_.load(std::memory_order_acquire);
  t_cache.owner = this;
  t_cache.generation = gen;
  t_cache.snapshot = s;
  t_cache.last_pool = nullptr;  // belongs to the replaced snapshot
  return s;
}

const std::shared_ptr<FunctionPool>* InstanceManager::Lookup(std::string_view name, std::string_view ns) const {
  const std::uint64_t gen = generation_.load(std::memory_order_acquire);
  if (t_cache.owner == this && t_cache.generation == gen && t_cache.last_pool != nullptr &&
      t_cache.last_name == name && t_cache.last_ns == ns) {
    return &t_cache.last_pool;
  }
  auto cur = Current();
  auto n = cur->find(ns);
  if (n == cur->end()) return nullptr;
  auto it = n->second.find(name);
  if (it == n->second.end()) return nullptr;
  // Current() just made t_cache hold `cur`: the pool is remembered with the snapshot it is in.
  t_cache.last_ns.assign(ns);
  t_cache.last_name.assign(name);
  t_cache.last_pool = it->second;
  return &t_cache.last_pool;
}

void InstanceManager::Publish(std::shared_ptr<const Snapshot> next) {
  snapshot_.store(std::move(next), std::memory_order_release);
  generation_.store(g_generation.fetch_add(1) + 1, std::memory_order_release);
}

Status<std::shared_ptr<FunctionPool>> InstanceManager::MakePool(Deployment& d) {
  auto pool = MakePoolOfKind(d);
  if (pool) (*pool)->set_ns(d.ns);
  return pool;
}

Status<std::shared_ptr<FunctionPool>> InstanceManager::MakePoolOfKind(Deployment& d) {
  if (auto v = store::FunctionStore::ValidateName(d.name); !v) return std::unexpected(v.error());
  if (auto v = ValidateNamespace(d.ns); !v) return std::unexpected(v.error());
  if (d.pool.replicas < 1) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("function {}: replicas must be at least 1", d.name));
  }
  if (d.factory) {
    return std::make_shared<FunctionPool>(d.name, std::move(d.factory), std::move(d.pool));
  }
  if (d.artifact.empty()) d.artifact = d.name;
  if (d.pool.instance.http == nullptr) d.pool.instance.http = http_;
  auto fn = store_->Load(d.artifact);
  if (!fn) {
    return MakeError(fn.error().code(), fmt::format("function {}: {}", d.name, fn.error().message()));
  }
  return std::make_shared<FunctionPool>(d.name, std::move(*fn), std::move(d.pool));
}

Status<void> InstanceManager::Deploy(Deployment d) {
  {
    auto cur = Current();
    auto ns = cur->find(d.ns);
    if (ns != cur->end() && ns->second.contains(d.name)) {
      return MakeError(ErrorCode::kAlreadyExists,
                       fmt::format("function {}.{} is already deployed; give each a unique name", d.name, d.ns));
    }
  }
  auto pool = MakePool(d);  // outside the lock: it may load an object
  if (!pool) return std::unexpected(pool.error());
  std::lock_guard<std::mutex> lock(change_mu_);
  auto next = std::make_shared<Snapshot>(*snapshot_.load());
  NameMap& names = (*next)[d.ns];
  if (names.contains(d.name)) {
    return MakeError(ErrorCode::kAlreadyExists,
                     fmt::format("function {}.{} is already deployed; give each a unique name", d.name, d.ns));
  }
  names.emplace(d.name, std::move(*pool));
  Publish(std::move(next));
  return {};
}

Status<void> InstanceManager::Replace(Deployment d) {
  auto pool = MakePool(d);
  if (!pool) return std::unexpected(pool.error());
  std::shared_ptr<FunctionPool> old;  // finished (instances' fini) after the lock is released
  std::lock_guard<std::mutex> lock(change_mu_);
  auto next = std::make_shared<Snapshot>(*snapshot_.load());
  auto ns = next->find(d.ns);
  auto it = ns == next->end() ? NameMap::iterator() : ns->second.find(d.name);
  if (ns == next->end() || it == ns->second.end()) {
    return MakeError(ErrorCode::kNotFound, fmt::format("function: {}.{} not found", d.name, d.ns));
  }
  old = std::move(it->second);
  it->second = std::move(*pool);
  Publish(std::move(next));
  return {};
}

Status<void> InstanceManager::Remove(std::string_view ns_name, std::string_view name) {
  std::shared_ptr<FunctionPool> old;
  std::lock_guard<std::mutex> lock(change_mu_);
  auto next = std::make_shared<Snapshot>(*snapshot_.load());
  auto ns = next->find(ns_name);
  if (ns == next->end() || ns->second.find(name) == ns->second.end()) {
    return MakeError(ErrorCode::kNotFound, fmt::format("function {}.{} not found", name, ns_name));
  }
  auto it = ns->second.find(name);
  old = std::move(it->second);
  ns->second.erase(it);
  if (ns->second.empty()) next->erase(ns);
  Publish(std::move(next));
  return {};
}

std::shared_ptr<FunctionPool> InstanceManager::Find(std::string_view name, std::string_view ns) const {
  const std::shared_ptr<FunctionPool>* p = Lookup(name, ns);
  return p == nullptr ? nullptr : *p;
}

bool InstanceManager::Contains(std::string_view name, std::string_view ns) const {
  return Lookup(name, ns) != nullptr;
}

std::vector<std::string> InstanceManager::Names(std::string_view ns) const {
  std::vector<std::string> out;
  auto cur = Current();
  if (auto n = cur->find(ns); n != cur->end()) {
    for (const auto& [name, pool] : n->second) out.push_back(name);
  }
  return out;
}

std::vector<DeployedFunction> InstanceManager::List() const {
  std::vector<DeployedFunction> out;
  auto cur = Current();
  for (const auto& [ns, names] : *cur) {
    for (const auto& [name, pool] : names) out.push_back({ns, name, pool});
  }
  return out;
}

Status<void> InstanceManager::StartReaper(junction::sched::Clock::duration period) {
  stop_reaper_.store(false);
  auto h = junction::sched::Spawn([this, period] {
    reaper_ref_.store(junction::sched::Self(), std::memory_order_release);
    while (!stop_reaper_.load(std::memory_order_acquire)) {
      junction::sched::ParkUntil(junction::sched::Clock::now() + period);
      const auto now = junction::sched::Clock::now();
      for (const DeployedFunction& f : List()) f.pool->ReapIdle(now);
    }
  });
  if (!h) return std::unexpected(h.error());
  reaper_ = std::move(*h);
  return {};
}

void InstanceManager::StopReaper() {
  if (!reaper_.joinable()) return;
  stop_reaper_.store(true, std::memory_order_release);
  while (reaper_ref_.load(std::memory_order_acquire) == nullptr) junction::sched::Yield();
  junction::sched::Unpark(reaper_ref_.load());
  reaper_.Join();
}

}  // namespace faasnode::instances
