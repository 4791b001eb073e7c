// instance_manager.h — the deployed functions of the node: name -> FunctionPool, and the
// reaper uthread that scales idle instances to zero.
//
// Deploy() every function before Freeze(); after it the set is read-only and Find() takes no
// lock (a deploy API that changes functions at run time arrives with the OpenFaaS API).
//
// Threads: Deploy/Freeze on one uthread at start-up; Find from any uthread afterwards;
// StartReaper/StopReaper from uthreads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "faasd-shim/instances/function_pool.h"
#include "faasd-shim/store/function_store.h"
#include "junction/base/error.h"
#include "junction/sched/sched.h"

namespace faasnode::instances {

struct Deployment {
  std::string name;      // the function's name on the API (/function/NAME)
  std::string artifact;  // the object in the function store (NAME.so); usually the name
  PoolOptions pool;
  // When set, instances come from it (e.g. an exec function, faasd-shim/exec) and `artifact`
  // is not loaded.
  InstanceFactory factory;
};

class InstanceManager {
 public:
  explicit InstanceManager(store::FunctionStore* store) : store_(store) {}
  ~InstanceManager();

  // Loads the artifact unless a factory is given (blocks the kthread the first time: do it at
  // start-up) and adds the
  // function with no instances yet (the first request cold-starts one). Errors: a frozen
  // manager, a duplicate name, bad options, and the store's load errors.
  junction::Status<void> Deploy(Deployment deployment);
  void Freeze() { frozen_ = true; }

  // nullptr when no such function is deployed. Lock-free once frozen.
  FunctionPool* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

  // Every `period`, scales down instances idle past their pool's idle_timeout.
  junction::Status<void> StartReaper(junction::sched::Clock::duration period);
  void StopReaper();

 private:
  store::FunctionStore* store_;
  bool frozen_ = false;
  std::map<std::string, std::unique_ptr<FunctionPool>, std::less<>> pools_;
  std::atomic<bool> stop_reaper_{false};
  junction::sched::JoinHandle reaper_;
  junction::sched::ThreadRef reaper_ref_ = nullptr;
};

}  // namespace faasnode::instances
