// instance_manager.h — the deployed functions of the node: (namespace, name) -> FunctionPool,
// changeable while the node serves, and the reaper uthread that scales idle instances down.
//
//   InstanceManager m(store);
//   m.Deploy({.name = "echo"});                         // openfaas-fn, echo.so
//   std::shared_ptr<FunctionPool> p = m.Find("echo");    // hot path: no lock when unchanged
//   m.Replace({.name = "echo", .pool = {...}});          // new calls go to the new pool
//   m.Remove("openfaas-fn", "echo");
//
// The function set is an immutable snapshot published through an atomic shared_ptr; every
// change copies the (small) map and publishes a new one with a new generation number. Each
// kthread keeps the snapshot it last saw and re-reads the shared one only when the generation
// moved, so Find() in steady state takes no lock and writes no shared cache line. A pool that
// is replaced or removed lives on while calls that found it are still running (shared_ptr),
// then its instances are finished.
//
// Threads: every method may be called from any uthread (or plain thread) at once; changes are
// serialised by a std::mutex held only to copy the map (never across a load or a cold start).
// Deploy/Replace load the artifact, which blocks the kthread the first time an object is
// loaded.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "faasd-shim/instances/function_pool.h"
#include "faasd-shim/store/function_store.h"
#include "junction/base/error.h"
#include "junction/sched/sched.h"

namespace faasnode::instances {

inline constexpr std::string_view kDefaultNamespace = "openfaas-fn";

struct Deployment {
  std::string name;      // the function's name on the API (/function/NAME)
  std::string artifact;  // the object in the function store (NAME.so); usually the name
  PoolOptions pool;
  // When set, instances come from it (e.g. an exec function, faasd-shim/exec) and `artifact`
  // is not loaded.
  InstanceFactory factory;
  std::string ns = std::string(kDefaultNamespace);
};

struct DeployedFunction {
  std::string ns;
  std::string name;
  std::shared_ptr<FunctionPool> pool;
};

class InstanceManager {
 public:
  // `http` (may be null): the client native instances' outbound calls go through (ABI v3
  // http_request), lent to every pool whose options name none; it must outlive the manager.
  explicit InstanceManager(store::FunctionStore* store, junction::http::Client* http = nullptr);
  ~InstanceManager();

  // Adds a function with no instances yet (the first request, or Prewarm, starts one).
  // Errors: kAlreadyExists when (ns, name) is deployed; kInvalidArgument for a bad name or
  // options; the store's load errors. Nothing changes on error.
  junction::Status<void> Deploy(Deployment deployment);
  // Swaps in a new pool for a deployed function; calls running on the old one finish there.
  // Errors: kNotFound when (ns, name) is not deployed; otherwise Deploy's.
  junction::Status<void> Replace(Deployment deployment);
  // Errors: kNotFound.
  junction::Status<void> Remove(std::string_view ns, std::string_view name);

  // nullptr when no such function is deployed. Lock-free while the set is unchanged.
  std::shared_ptr<FunctionPool> Find(std::string_view name, std::string_view ns = kDefaultNamespace) const;
  // Find(name, ns) != nullptr, without taking a reference to the pool.
  bool Contains(std::string_view name, std::string_view ns = kDefaultNamespace) const;
  // Names in one namespace, sorted.
  std::vector<std::string> Names(std::string_view ns = kDefaultNamespace) const;
  // Every deployed function, sorted by namespace then name.
  std::vector<DeployedFunction> List() const;

  // Every `period`, scales down instances idle past their pool's idle_timeout.
  junction::Status<void> StartReaper(junction::sched::Clock::duration period);
  void StopReaper();

 private:
  using NameMap = std::map<std::string, std::shared_ptr<FunctionPool>, std::less<>>;
  using Snapshot = std::map<std::string, NameMap, std::less<>>;  // ns -> name -> pool

  junction::Status<std::shared_ptr<FunctionPool>> MakePool(Deployment& d);
  junction::Status<std::shared_ptr<FunctionPool>> MakePoolOfKind(Deployment& d);
  std::shared_ptr<const Snapshot> Current() const;
  // The pool of (ns, name) in the current snapshot, or nullptr; the pointer is into this
  // kthread's cache: valid until the next call on the kthread (no parking in between).
  const std::shared_ptr<FunctionPool>* Lookup(std::string_view name, std::string_view ns) const;
  void Publish(std::shared_ptr<const Snapshot> next);  // under change_mu_
  void DropCachedSnapshots();  // from a uthread (or outside any runtime)

  store::FunctionStore* store_;
  junction::http::Client* http_;
  std::mutex change_mu_;  // serialises Deploy/Replace/Remove
  std::atomic<std::shared_ptr<const Snapshot>> snapshot_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_reaper_{false};
  junction::sched::JoinHandle reaper_;
  std::atomic<junction::sched::ThreadRef> reaper_ref_{nullptr};
};

}  // namespace faasnode::instances
