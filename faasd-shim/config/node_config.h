// node_config.h — the node's configuration: embedded defaults, overridden by a TOML file.
//
// Strict: an unknown section or key, a wrong type or an out-of-range value is an error whose
// one-line message names the key ("runtime.stack_size_kib: ...") so the CLI can print it and
// exit with code 2. Sections other issues add (net, http, energy, functions) extend this file.
//
//   [runtime]
//   cores = [0, 1]          # CPUs to pin one worker each to (default: every usable CPU)
//   stack_size_kib = 64     # per uthread, committed lazily; minimum 16
//   [net]
//   backend = "kernel"      # or "dpdk"
//   listen = "127.0.0.1:8080"
//   [net.dpdk]              # backend = "dpdk" only
//   eal_args = ["--no-pci", "--vdev=net_tap0,iface=fn0"]
//   ip = "10.0.0.2"
//   [http]
//   max_body_bytes = 8388608
//   read_timeout_ms = 30000
//   [functions]
//   store = "build/functions"   # where NAME.so files are
//   [functions.echo]            # a [functions.NAME] table replaces the default set
//   replicas = 2
//   max_inflight = 64
//   idle_timeout_ms = 300000    # scale to zero after this idle (0: never)
//   min_warm = 1                # started with the node and never reaped (default 0: the
//                               # first call cold-starts the first instance)
//   env = { GREETING = "hi" }
//   [functions.wc]              # an exec function: one child process per request
//   fprocess = "wc -l"          # split on spaces, no shell; body -> stdin, stdout -> body
//   exec_timeout_ms = 10000     # then 408 and the child's process group is killed
//   memory_limit_mib = 256      # RLIMIT_AS of each child
//   combine_output = true       # stderr appended to the body
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <chrono>
#include <cstdint>

#include "junction/base/error.h"
#include "junction/net/dpdk/dpdk_options.h"
#include "junction/sched/runtime_config.h"

namespace faasnode {

struct NetConfig {
  std::string backend = "kernel";    // "kernel" (unprivileged) or "dpdk"
  std::string listen = "127.0.0.1:8080";
  // [net.dpdk] and [net.dpdk.faults]: used when backend = "dpdk" (see dpdk_options.h).
  junction::net::DpdkOptions dpdk;
  // New connections per core whose TCP rings the stack readies at start, the first
  // prime_ring_bytes of each send and receive ring mapped in (Stack::PrimeConnections; the
  // kernel backend has none to ready): 4 MiB per core by default. 0: rings are allocated,
  // and their pages faulted in, by the first burst of connections.
  std::size_t prime_connections = 128;
  std::size_t prime_ring_bytes = 16 * 1024;
};

struct HttpConfig {
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_header_count = 100;
  std::size_t max_body_bytes = 8 * 1024 * 1024;
  std::chrono::milliseconds read_timeout{30'000};
  std::chrono::milliseconds write_timeout{30'000};
  std::chrono::milliseconds idle_timeout{60'000};
};

// One function the node serves at /function/NAME.
struct FunctionConfig {
  std::string name;
  std::string artifact;  // NAME.so in the function store; default: the name
  int replicas = 1;      // instances at most
  int max_inflight = 0;  // requests per instance at once; 0: unlimited
  std::chrono::milliseconds idle_timeout{0};  // scale to zero after this idle; 0: never
  // Instances started with the node and kept warm (never reaped below). 0: none is started
  // until the first call, which cold-starts it (and every call after a scale to zero).
  int min_warm = 0;
  std::vector<std::pair<std::string, std::string>> env;
  // Exec functions (kind "exec", given by `fprocess`); see faasd-shim/exec/exec_function.h.
  std::string kind = "native";  // "native" (NAME.so) or "exec"
  std::string fprocess;         // "PROGRAM ARG ...": split on spaces, no shell
  bool combine_output = true;
  std::chrono::milliseconds exec_timeout{10'000};  // 0: none
  std::uint64_t memory_limit_mib = 256;            // RLIMIT_AS per child; 0: none
};

struct FunctionsConfig {
  std::string store_dir;  // the directory of NAME.so files; default: the build's functions/
  std::vector<FunctionConfig> functions;  // default: every sample function, native and exec
  std::string exec_user = "nobody";       // who exec children run as (the node must be root)
  std::string exec_tmp_dir = "/tmp/faasnode-exec";  // parent of their per-call temp dirs
};

// The energy bill (see faasd-shim/billing). Joules come from a power model on machines with
// no energy counter (these VMs): idle and max watts per core, defaults from the Cloud Carbon
// Footprint coefficients (AWS averages per vCPU).
struct EnergyConfig {
  bool enabled = true;
  std::chrono::milliseconds interval{10};
  std::string ledger = "faasnode-state/ledger.db";  // relative to the working directory
  double carbon_g_per_kwh = 400.0;  // a round placeholder: set your grid's, or a trace
  std::string carbon_trace;         // CSV (timestamp, gCO2e/kWh), e.g. configs/carbon/...
  // A trace's gaps (empty values, missing rows): "hold" the last measured value or
  // "interpolate" between the measured rows either side; each bill says which it got.
  std::string carbon_gaps = "interpolate";
  // Embodied (manufacturing) gCO2e per core-second of an invocation; 0: not reported. E.g. a
  // 1,200 kgCO2e server with 64 cores over 4 years: 1.2e6 / (64 × 4 × 365 × 86400) ≈ 1.5e-4.
  double embodied_g_per_core_second = 0.0;
  double idle_watts_per_core = 0.74;
  double max_watts_per_core = 3.5;
  bool response_headers = true;   // X-Energy-Joules / X-Carbon-Grams on every invocation
  bool share_idle = false;        // idle (static) power to the interval's invocations, or apart
  bool share_overhead = false;    // the node's overhead likewise
  std::string meter = "auto";     // auto (RAPL if present, else the model) | rapl | model
  std::string gpu_meter = "auto";  // auto (NVML if present) | nvml | off
};

// The node's durable state (faasd-shim/state): the deployments, namespaces and secrets made
// through the API, and the basic-auth files (basic-auth-user, basic-auth-password).
//   [state]
//   dir = "faasnode-state"       # relative to the working directory
//   [images]                     # image -> native function in the store, for deploys by image
//   "faasnode/echo:latest" = "echo"
struct StateConfig {
  std::string dir = "faasnode-state";
  bool auth = true;  // basic auth on /system/* (as faasd); false only for local experiments
};

// The /async-function queue (faasd-shim/async); its rows live in <state.dir>/async.db.
//   [async]
//   workers = 2                  # uthreads running queued calls
//   callback_attempts = 5        # POSTs to X-Callback-Url before giving up
//   callback_base_delay_ms = 500 # wait before the 2nd attempt; doubles each time
//   callback_timeout_ms = 10000  # per attempt
struct AsyncConfig {
  int workers = 2;
  int callback_attempts = 5;
  std::chrono::milliseconds callback_base_delay{500};
  std::chrono::milliseconds callback_timeout{10'000};
};

// Function logs kept in memory for /system/logs, per function (the oldest lines go first).
//   [logs]
//   max_lines = 1000
//   max_bytes = 1048576
struct LogsConfig {
  std::size_t max_lines = 1000;
  std::size_t max_bytes = 1 << 20;
};

struct NodeConfig {
  // A node maps 128 stacks and 4 MiB of malloc heap per core at start
  // (runtime.stack_prealloc, runtime.heap_prealloc_kib; the runtime's own defaults are 0): a
  // burst of new connections then takes no page faults on stacks or heap growth.
  junction::sched::RuntimeConfig runtime{.stack_prealloc = 128, .heap_prealloc = 4 << 20};
  StateConfig state;
  // image -> function store name. Default: faasnode/NAME:latest for each sample native function.
  std::vector<std::pair<std::string, std::string>> images;
  NetConfig net;
  HttpConfig http;
  FunctionsConfig functions;
  EnergyConfig energy;
  AsyncConfig async;
  LogsConfig logs;
  std::string source = "embedded defaults";  // where it came from, for logs
};

// The embedded defaults: every usable CPU, 64 KiB stacks, the kernel backend on
// 127.0.0.1:8080, and every sample native function (echo, hello, json-stats, sha256, sleep,
// cpu-burn, swiglu-mlp) from the build's function store, and the exec samples cat, wc (wc -l)
// and sha512sum.
NodeConfig DefaultNodeConfig();

// Parses TOML text over the defaults and validates the result. `origin` names the text in
// error messages (a file path).
junction::Status<NodeConfig> ParseNodeConfig(std::string_view toml_text, std::string_view origin);

// Reads and parses a file. Errors: the file cannot be read, or ParseNodeConfig's.
junction::Status<NodeConfig> LoadNodeConfig(const std::string& path);

}  // namespace faasnode
