// system_deployer.h — the node's control plane behind the /system endpoints: turns a
// FunctionDeployment into running pools, keeps the StateDb in step, restores at start-up.
//
//   SystemDeployer d(&manager, db, &secrets, options);
//   d.Restore();                         // start-up: every stored deployment is back
//   d.Create(spec);                      // POST /system/functions
//   d.Update(spec);                      // PUT: kNotFound "function: NAME.NS not found"
//
// From `image` to an artifact: a spec with envProcess (or envVars.fprocess) is an exec
// function, run on the host by faasd-shim/exec (this node runs no containers); otherwise the
// image must be a key of the image map (config [images]: image -> a function store name; the
// store only takes DNS-label names, so an image can never name a path outside the store).
//
// Labels honoured: com.openfaas.scale.min (instances kept warm, >= 1 by default),
// com.openfaas.scale.max (instances at most), com.openfaas.scale.zero=true (scale to zero
// after options.scale_zero_idle, or com.openfaas.scale.zero-duration such as "15m").
// limits.memory: enforced for exec functions (RLIMIT_AS of each child); for native functions
// it is recorded and reported, not enforced (they share the node's address space).
//
// Every change is durable (StateDb) before the call returns; when any step fails, nothing
// changes: neither the running set nor the stored one.
//
// Threads: any uthread; changes are serialised by a std::mutex held across the change (a
// cold start, a SQLite commit: milliseconds): control plane only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "faasd-shim/instances/instance_manager.h"
#include "faasd-shim/logs/log_store.h"
#include "faasd-shim/state/function_spec.h"
#include "faasd-shim/state/secret_store.h"
#include "faasd-shim/state/state_db.h"
#include "junction/base/error.h"

namespace faasnode::api {

struct DeployerOptions {
  std::map<std::string, std::string> images;  // image -> function store name
  std::chrono::milliseconds scale_zero_idle{300'000};
  int default_max_replicas = 1;
  // Exec functions (faasd-shim/exec): who children run as, where their temp dirs go, and the
  // defaults a deployment does not set.
  std::string exec_user = "nobody";
  std::string exec_tmp_dir = "/tmp/faasnode-exec";
  std::uint64_t exec_default_memory_bytes = std::uint64_t{256} << 20;
  std::chrono::milliseconds exec_default_timeout{10'000};
  // Where every deployment's log lines go (/system/logs): SDK lines of native functions,
  // children's stderr and the watchdog lines of exec ones. nullptr: the node's stderr (native)
  // and spdlog at debug level (exec). Must outlive the deployer and every pool it built.
  logs::LogStore* log_store = nullptr;
};

// One deployment as the API shows it.
struct DeployedSpec {
  state::FunctionSpec spec;
  std::int64_t created_ns = 0;
  std::shared_ptr<instances::FunctionPool> pool;
  std::uint64_t invocations = 0;  // over every pool this deployment had
};

class SystemDeployer {
 public:
  SystemDeployer(instances::InstanceManager* manager, state::StateDb* db, state::SecretStore* secrets,
                 DeployerOptions options);

  // Starts every stored deployment. A record that no longer deploys (its artifact was removed)
  // is logged and skipped, and stays stored. Returns how many started.
  junction::Status<int> Restore();

  // POST: create only. Errors: kInvalidArgument (bad name, namespace not valid, unknown image,
  // bad label, "unable to find secret: X", a failing cold start), kAlreadyExists.
  junction::Status<void> Create(state::FunctionSpec spec);
  // PUT: kNotFound "function: NAME.NS not found"; otherwise Create's.
  junction::Status<void> Update(state::FunctionSpec spec);
  // kNotFound "function NAME.NS not found".
  junction::Status<void> Delete(const std::string& ns, const std::string& name);
  // Keeps `replicas` warm (at most the pool's max). kNotFound "function: NAME.NS not found".
  junction::Status<void> Scale(const std::string& ns, const std::string& name, std::uint64_t replicas);

  std::optional<DeployedSpec> Get(const std::string& ns, const std::string& name) const;
  std::vector<DeployedSpec> List(const std::string& ns) const;

  // Namespaces: openfaas-fn always; others when stored with label openfaas = "1" or "true".
  bool NamespaceValid(const std::string& ns) const;
  std::vector<std::string> Namespaces() const;
  std::optional<state::NamespaceRequest> GetNamespace(const std::string& ns) const;
  junction::Status<void> CreateNamespace(const state::NamespaceRequest& ns);   // kAlreadyExists
  junction::Status<void> UpdateNamespace(const state::NamespaceRequest& ns);   // kNotFound
  junction::Status<void> DeleteNamespace(const std::string& ns);               // kNotFound; 400 if used

  state::SecretStore* secrets() const { return secrets_; }

 private:
  struct Entry {
    state::FunctionSpec spec;
    std::int64_t created_ns = 0;
    std::uint64_t invocation_base = 0;
  };
  // Validates and builds the instances::Deployment for `spec` (resolved in place).
  junction::Status<instances::Deployment> Build(state::FunctionSpec& spec);
  junction::Status<void> Start(state::FunctionSpec& spec, bool replace);
  bool NamespaceValidLocked(const std::string& ns) const;
  std::string ExecSecretsRoot() const { return options_.exec_tmp_dir + "/secrets"; }
  static std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

  instances::InstanceManager* manager_;
  state::StateDb* db_;
  state::SecretStore* secrets_;
  const DeployerOptions options_;
  mutable std::mutex mu_;  // guards entries_ and namespaces_, serialises changes
  std::map<std::string, Entry> entries_;  // Key(ns, name)
  std::map<std::string, state::NamespaceRequest> namespaces_;
};

// A Kubernetes quantity ("128Mi", "64M", "1G", "1024") in bytes. kInvalidArgument otherwise.
junction::Status<std::uint64_t> ParseMemoryQuantity(std::string_view q);

}  // namespace faasnode::api
