// system_deployer.cc — deploy, update, delete, scale and restore; namespaces.
#include "faasd-shim/api/system_deployer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "faasd-shim/exec/exec_function.h"
#include "faasd-shim/logs/exec_log_sink.h"
#include "faasd-shim/logs/sdk_log_sink.h"
#include "faasd-shim/store/function_store.h"

namespace faasnode::api {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

std::int64_t UnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

std::unexpected<junction::Error> Bad(std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); }

Status<int> IntLabel(const std::map<std::string, std::string>& labels, const char* key, int lo, int hi) {
  auto it = labels.find(key);
  if (it == labels.end()) return -1;
  int v = 0;
  const auto& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) {
    return Bad(fmt::format("label {}: \"{}\" is not a whole number in [{}, {}]", key, s, lo, hi));
  }
  return v;
}

// "15m", "30s", "2h", "500ms" (Go durations, one unit).
Status<std::chrono::milliseconds> ParseDuration(std::string_view s, const char* key) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::string_view unit = s.substr(static_cast<std::size_t>(p - s.data()));
  double ms = 0;
  if (ec != std::errc() || v < 0) {
    ms = -1;
  } else if (unit == "ms") {
    ms = v;
  } else if (unit == "s") {
    ms = v * 1e3;
  } else if (unit == "m") {
    ms = v * 60e3;
  } else if (unit == "h") {
    ms = v * 3600e3;
  } else {
    ms = -1;
  }
  if (ms < 0) return Bad(fmt::format("label {}: \"{}\" is not a duration such as 30s, 15m or 1h", key, s));
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

bool NamespaceLabelled(const std::map<std::string, std::string>& labels) {
  auto it = labels.find("openfaas");
  return it != labels.end() && (it->second == "1" || it->second == "true");
}

}  // namespace

Status<std::uint64_t> ParseMemoryQuantity(std::string_view q) {
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(q.data(), q.data() + q.size(), n);
  const std::string_view suffix = q.substr(static_cast<std::size_t>(p - q.data()));
  static constexpr std::pair<std::string_view, std::uint64_t> kUnits[] = {
      {"", 1},           {"k", 1000},       {"K", 1000},         {"M", 1000'000},    {"G", 1000'000'000},
      {"T", 1'000'000'000'000}, {"Ki", 1ull << 10}, {"Mi", 1ull << 20}, {"Gi", 1ull << 30}, {"Ti", 1ull << 40}};
  if (ec == std::errc() && p != q.data()) {
    for (const auto& [u, mult] : kUnits) {
      if (suffix == u && n <= UINT64_MAX / mult) return n * mult;
    }
  }
  return Bad(fmt::format("limits.memory: \"{}\" is not a memory quantity such as 128Mi, 64M or 1Gi", q));
}

SystemDeployer::SystemDeployer(instances::InstanceManager* manager, state::StateDb* db, state::SecretStore* secrets,
                               DeployerOptions options)
    : manager_(manager), db_(db), secrets_(secrets), options_(std::move(options)) {
  if (auto ns = db_->Namespaces()) {
    for (const auto& r : *ns) {
      state::NamespaceRequest n;
      n.name = r.name;
      n.labels = nlohmann::json::parse(r.labels_json, nullptr, false).get<std::map<std::string, std::string>>();
      n.annotations =
          nlohmann::json::parse(r.annotations_json, nullptr, false).get<std::map<std::string, std::string>>();
      namespaces_[r.name] = std::move(n);
    }
  }
}

Status<instances::Deployment> SystemDeployer::Build(state::FunctionSpec& spec) {
  if (spec.ns.empty()) spec.ns = std::string(state::kDefaultNamespace);
  if (spec.service.empty()) return Bad("service is required: the function's name");
  if (auto v = store::FunctionStore::ValidateName(spec.service); !v) return std::unexpected(v.error());
  if (!NamespaceValidLocked(spec.ns)) return Bad("namespace not valid");
  instances::Deployment d;
  d.name = spec.service;
  d.ns = spec.ns;
  if (options_.log_store != nullptr) d.pool.instance.log = logs::MakeSdkLogSink(options_.log_store, spec.service, spec.ns);

  auto min = IntLabel(spec.labels, "com.openfaas.scale.min", 0, 1024);
  if (!min) return std::unexpected(min.error());
  auto max = IntLabel(spec.labels, "com.openfaas.scale.max", 1, 1024);
  if (!max) return std::unexpected(max.error());
  bool zero = false;
  if (auto it = spec.labels.find("com.openfaas.scale.zero"); it != spec.labels.end()) {
    if (it->second != "true" && it->second != "false") {
      return Bad(fmt::format("label com.openfaas.scale.zero: \"{}\" must be \"true\" or \"false\"", it->second));
    }
    zero = it->second == "true";
  }
  std::chrono::milliseconds zero_idle = options_.scale_zero_idle;
  if (auto it = spec.labels.find("com.openfaas.scale.zero-duration"); it != spec.labels.end()) {
    auto dur = ParseDuration(it->second, "com.openfaas.scale.zero-duration");
    if (!dur) return std::unexpected(dur.error());
    zero_idle = *dur;
  }
  // The API's deployments keep one instance warm unless scale-to-zero is asked for; the
  // config's functions (start_cold) only what com.openfaas.scale.min says.
  const int floor = spec.scale ? *spec.scale : (*min >= 0 ? *min : (zero || spec.start_cold ? 0 : 1));
  d.pool.replicas = std::max({*max > 0 ? *max : options_.default_max_replicas, *min, 1});
  d.pool.min_instances = zero && !spec.scale ? std::max(0, *min) : std::max(floor, 0);
  d.pool.max_inflight = spec.max_inflight;
  if (spec.idle_timeout_ms >= 0) {
    d.pool.idle_timeout = std::chrono::milliseconds(spec.idle_timeout_ms);
  } else if (zero || *min >= 0) {
    d.pool.idle_timeout = zero ? zero_idle : options_.scale_zero_idle;
  }

  std::uint64_t memory_bytes = 0;
  if (spec.limits && !spec.limits->memory.empty()) {
    auto m = ParseMemoryQuantity(spec.limits->memory);
    if (!m) return std::unexpected(m.error());
    memory_bytes = *m;
  }

  std::string fprocess = spec.env_process;
  if (auto it = spec.env_vars.find("fprocess"); it != spec.env_vars.end()) fprocess = it->second;
  if (!fprocess.empty()) {
    // An exec function: the image's command runs on the host, one child per request, as the
    // exec user (when the node is root): its secret copies are handed to that user.
    state::SecretStore::CopyOptions copy;
    copy.root = ExecSecretsRoot();
    if (geteuid() == 0) {
      const passwd* pw = getpwnam(options_.exec_user.c_str());
      if (pw == nullptr) return Bad(fmt::format("exec user {} does not exist; set functions.exec_user", options_.exec_user));
      copy.chown = true;
      copy.uid = pw->pw_uid;
      copy.gid = pw->pw_gid;
    }
    auto secrets = secrets_->Materialize(spec.ns, spec.service, spec.secrets, copy);
    if (!secrets) return Bad(secrets.error().message());
    exec::ExecSpec e;
    e.name = spec.service;
    e.fprocess = fprocess;
    for (const auto& [k, v] : spec.env_vars) {
      if (k != "fprocess") e.env.emplace_back(k, v);
    }
    if (!spec.secrets.empty()) e.secrets_dir = secrets->dir;
    e.limits.memory_bytes = memory_bytes > 0 ? memory_bytes : options_.exec_default_memory_bytes;
    e.exec_timeout = spec.exec_timeout_ms >= 0 ? std::chrono::milliseconds(spec.exec_timeout_ms)
                                               : options_.exec_default_timeout;
    e.combine_output = spec.combine_output;
    e.user = options_.exec_user;
    e.tmp_root = options_.exec_tmp_dir;
    if (options_.log_store != nullptr) e.log = logs::MakeExecLogSink(options_.log_store, spec.ns);
    auto fn = exec::ExecFunction::Create(std::move(e));
    if (!fn) return Bad(fn.error().message());
    spec.kind = "exec";
    spec.artifact.clear();
    d.factory = [fn = std::move(*fn)] { return fn->NewInstance(); };
    return d;
  }
  if (spec.kind == "native" && !spec.artifact.empty()) {
    // A stored deployment (or one the node's config declared): its artifact was resolved when
    // it was made, and stays what it was whatever the image map says now.
    d.artifact = spec.artifact;
    auto secrets = secrets_->Materialize(spec.ns, spec.service, spec.secrets);
    if (!secrets) return Bad(secrets.error().message());
    for (const auto& [k, v] : spec.env_vars) d.pool.env.vars.emplace_back(k, v);
    if (!spec.secrets.empty()) d.pool.env.vars.emplace_back("FAASNODE_SECRETS_DIR", secrets->dir);
    d.pool.env.secrets = std::move(secrets->values);
    return d;
  }
  std::string image = spec.image;
  auto it = options_.images.find(image);
  if (it == options_.images.end() && image.find(':') == std::string::npos) it = options_.images.find(image + ":latest");
  if (it == options_.images.end()) {
    std::string known;
    for (const auto& [img, art] : options_.images) known += (known.empty() ? "" : ", ") + img;
    return Bad(fmt::format("image \"{}\" is not a native function of this node ([images] in its config maps "
                           "{}), and the deployment has no envProcess/fprocess to run on the host (this node "
                           "runs no containers)",
                           image, known.empty() ? "none" : known));
  }
  spec.kind = "native";
  spec.artifact = it->second;
  d.artifact = it->second;
  auto secrets = secrets_->Materialize(spec.ns, spec.service, spec.secrets);
  if (!secrets) return Bad(secrets.error().message());
  for (const auto& [k, v] : spec.env_vars) d.pool.env.vars.emplace_back(k, v);
  if (!spec.secrets.empty()) d.pool.env.vars.emplace_back("FAASNODE_SECRETS_DIR", secrets->dir);
  d.pool.env.secrets = std::move(secrets->values);
  if (memory_bytes > 0) {
    spdlog::warn("function {}.{}: limits.memory {} is recorded but not enforced: native functions share the "
                 "node's address space (exec functions get it as a limit)",
                 spec.service, spec.ns, spec.limits->memory);
  }
  return d;
}

Status<void> SystemDeployer::Start(state::FunctionSpec& spec, bool replace) {
  auto d = Build(spec);
  if (!d) return std::unexpected(d.error());
  // A deployment starts with one instance at least (as OpenFaaS's), except a start_cold one:
  // its first call cold-starts it.
  const int warm = spec.start_cold ? d->pool.min_instances : std::max(1, d->pool.min_instances);
  auto placed = replace ? manager_->Replace(std::move(*d)) : manager_->Deploy(std::move(*d));
  if (!placed) {
    if (placed.error().code() == ErrorCode::kNotFound || placed.error().code() == ErrorCode::kAlreadyExists) {
      return placed;
    }
    return Bad(placed.error().message());
  }
  auto pool = manager_->Find(spec.service, spec.ns);
  if (warm > 0) {
    if (auto w = pool->Prewarm(warm); !w) return Bad(w.error().message());
  }
  return {};
}

Status<int> SystemDeployer::Restore() {
  auto records = db_->Functions();
  if (!records) return std::unexpected(records.error());
  std::lock_guard<std::mutex> lock(mu_);
  int started = 0;
  for (const auto& r : *records) {
    auto spec = state::FromStoredJson(r.spec_json);
    if (!spec) {
      spdlog::error("state: deployment {}.{} is unreadable ({}); left stored, not started", r.name, r.ns,
                    spec.error().message());
      continue;
    }
    if (auto s = Start(*spec, /*replace=*/false); !s) {
      spdlog::error("state: deployment {}.{} did not start again: {}; left stored, not started", r.name, r.ns,
                    s.error().message());
      continue;
    }
    entries_[Key(r.ns, r.name)] = {std::move(*spec), r.created_ns, 0};
    ++started;
  }
  return started;
}

Status<void> SystemDeployer::Create(state::FunctionSpec spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spec.ns.empty()) spec.ns = std::string(state::kDefaultNamespace);
  if (entries_.contains(Key(spec.ns, spec.service))) {
    return MakeError(ErrorCode::kAlreadyExists,
                     fmt::format("function {}.{} already exists; update it with PUT /system/functions",
                                 spec.service, spec.ns));
  }
  if (auto s = Start(spec, false); !s) {
    if (s.error().code() != ErrorCode::kAlreadyExists) {
      if (manager_->Find(spec.service, spec.ns)) (void)manager_->Remove(spec.ns, spec.service);
      secrets_->Forget(spec.ns, spec.service, ExecSecretsRoot());
    }
    return s;
  }
  const std::int64_t created = UnixNs();
  if (auto p = db_->PutFunction({spec.ns, spec.service, state::ToStoredJson(spec), created}); !p) {
    (void)manager_->Remove(spec.ns, spec.service);
    secrets_->Forget(spec.ns, spec.service, ExecSecretsRoot());
    return MakeError(ErrorCode::kIo, "storing the deployment failed, nothing deployed: " + p.error().message());
  }
  const std::string key = Key(spec.ns, spec.service);  // before spec is moved from
  entries_[key] = {std::move(spec), created, 0};
  return {};
}

Status<void> SystemDeployer::Update(state::FunctionSpec spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spec.ns.empty()) spec.ns = std::string(state::kDefaultNamespace);
  if (!NamespaceValidLocked(spec.ns)) return Bad("namespace not valid");
  auto it = entries_.find(Key(spec.ns, spec.service));
  if (it == entries_.end()) {
    return MakeError(ErrorCode::kNotFound, fmt::format("function: {}.{} not found", spec.service, spec.ns));
  }
  Entry old = it->second;
  auto old_pool = manager_->Find(spec.service, spec.ns);
  const std::uint64_t carried = old.invocation_base + (old_pool ? old_pool->invocations() : 0);
  if (auto s = Start(spec, true); !s) {
    // A spec that did not build (a bad image, say) never replaced the running pool: it keeps
    // serving, warm and counted. Otherwise, or when the old spec has secret copies the failed
    // build may have rewritten, back to the old deployment (its copies and a pool), its count
    // carried on.
    if (manager_->Find(spec.service, spec.ns) != old_pool || !old.spec.secrets.empty()) {
      state::FunctionSpec back = old.spec;
      if (auto r = Start(back, true); !r) spdlog::error("function {}.{}: restoring after a failed update: {}",
                                                        spec.service, spec.ns, r.error().message());
      it->second.invocation_base = carried;
    }
    return s;
  }
  const std::int64_t created = UnixNs();
  if (auto p = db_->PutFunction({spec.ns, spec.service, state::ToStoredJson(spec), created}); !p) {
    state::FunctionSpec back = old.spec;
    (void)Start(back, true);
    it->second.invocation_base = carried;
    return MakeError(ErrorCode::kIo, "storing the update failed, the old deployment stays: " + p.error().message());
  }
  it->second = {std::move(spec), created, carried};
  return {};
}

Status<void> SystemDeployer::Delete(const std::string& ns_in, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ns = ns_in.empty() ? std::string(state::kDefaultNamespace) : ns_in;
  if (!NamespaceValidLocked(ns)) return Bad("namespace not valid");
  auto it = entries_.find(Key(ns, name));
  if (it == entries_.end()) return MakeError(ErrorCode::kNotFound, fmt::format("function {}.{} not found", name, ns));
  if (auto d = db_->DeleteFunction(ns, name); !d) {
    return MakeError(ErrorCode::kIo, "removing the stored deployment failed, nothing removed: " + d.error().message());
  }
  (void)manager_->Remove(ns, name);
  secrets_->Forget(ns, name, ExecSecretsRoot());
  entries_.erase(it);
  return {};
}

Status<void> SystemDeployer::Scale(const std::string& ns_in, const std::string& name, std::uint64_t replicas) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ns = ns_in.empty() ? std::string(state::kDefaultNamespace) : ns_in;
  if (!NamespaceValidLocked(ns)) return Bad("namespace not valid");
  auto it = entries_.find(Key(ns, name));
  auto pool = manager_->Find(name, ns);
  if (it == entries_.end() || pool == nullptr) {
    return MakeError(ErrorCode::kNotFound, fmt::format("function: {}.{} not found", name, ns));
  }
  const int n = static_cast<int>(std::min<std::uint64_t>(replicas, static_cast<std::uint64_t>(pool->options().replicas)));
  state::FunctionSpec spec = it->second.spec;
  spec.scale = n;
  if (auto p = db_->PutFunction({ns, name, state::ToStoredJson(spec), it->second.created_ns}); !p) {
    return MakeError(ErrorCode::kIo, "storing the scale failed, nothing changed: " + p.error().message());
  }
  it->second.spec.scale = n;
  pool->set_floor(n);
  if (n == 0) {
    pool->set_floor(0);
  } else if (auto w = pool->Prewarm(n); !w) {
    return MakeError(ErrorCode::kInternal, w.error().message());
  }
  return {};
}

std::optional<DeployedSpec> SystemDeployer::Get(const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(Key(ns, name));
  if (it == entries_.end()) return std::nullopt;
  auto pool = manager_->Find(name, ns);
  return DeployedSpec{it->second.spec, it->second.created_ns, pool,
                      it->second.invocation_base + (pool ? pool->invocations() : 0)};
}

std::vector<DeployedSpec> SystemDeployer::List(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<DeployedSpec> out;
  const std::string prefix = ns + "/";
  for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix); ++it) {
    auto pool = manager_->Find(it->second.spec.service, ns);
    out.push_back({it->second.spec, it->second.created_ns, pool,
                   it->second.invocation_base + (pool ? pool->invocations() : 0)});
  }
  return out;
}

bool SystemDeployer::NamespaceValid(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  return NamespaceValidLocked(ns);
}

bool SystemDeployer::NamespaceValidLocked(const std::string& ns) const {
  if (ns == state::kDefaultNamespace) return true;
  auto it = namespaces_.find(ns);
  return it != namespaces_.end() && NamespaceLabelled(it->second.labels);
}

std::vector<std::string> SystemDeployer::Namespaces() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out{std::string(state::kDefaultNamespace)};
  for (const auto& [name, n] : namespaces_) {
    if (name != state::kDefaultNamespace && n.labels.contains("openfaas")) out.push_back(name);
  }
  return out;
}

std::optional<state::NamespaceRequest> SystemDeployer::GetNamespace(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (ns == state::kDefaultNamespace && !namespaces_.contains(ns)) {
    return state::NamespaceRequest{ns, {{"openfaas", "1"}}, {}};
  }
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end() || !NamespaceLabelled(it->second.labels)) return std::nullopt;
  return it->second;
}

namespace {
state::NamespaceRecord ToRecord(const state::NamespaceRequest& n) {
  return {n.name, nlohmann::json(n.labels).dump(), nlohmann::json(n.annotations).dump()};
}
}  // namespace

Status<void> SystemDeployer::CreateNamespace(const state::NamespaceRequest& n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (n.name == state::kDefaultNamespace || namespaces_.contains(n.name)) {
    return MakeError(ErrorCode::kAlreadyExists, fmt::format("namespace {} already exists", n.name));
  }
  if (auto p = db_->PutNamespace(ToRecord(n)); !p) return p;
  namespaces_[n.name] = n;
  return {};
}

Status<void> SystemDeployer::UpdateNamespace(const state::NamespaceRequest& n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!namespaces_.contains(n.name) && n.name != state::kDefaultNamespace) {
    return MakeError(ErrorCode::kNotFound, fmt::format("namespace {} not found", n.name));
  }
  if (auto p = db_->PutNamespace(ToRecord(n)); !p) return p;
  namespaces_[n.name] = n;
  return {};
}

Status<void> SystemDeployer::DeleteNamespace(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ns == state::kDefaultNamespace) return Bad("namespace openfaas-fn is the default one and cannot be removed");
  if (!namespaces_.contains(ns)) return MakeError(ErrorCode::kNotFound, fmt::format("namespace {} not found", ns));
  int used = 0;
  for (const auto& [k, e] : entries_) used += e.spec.ns == ns;
  if (used > 0) {
    return Bad(fmt::format("namespace {} still has {} function(s); remove them first", ns, used));
  }
  if (auto d = db_->DeleteNamespace(ns); !d) return d;
  namespaces_.erase(ns);
  return {};
}

}  // namespace faasnode::api
