// stack.cc — the Stack front (argument checks, counting) and the registry of named backends.
#include "junction/net/stack.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "junction/net/kernel_stack.h"
#include "junction/net/loopback_stack.h"

namespace junction::net {

Status<TcpListener> Stack::Listen(Endpoint local, const ListenOptions& options) {
  if (options.backlog < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("Listen {}: backlog must be at least 1 (got {})", local.ToString(),
                                 options.backlog));
  }
  auto l = DoListen(local, options);
  if (!l) counters_.Add(Counter::kErrors);
  return l;
}

Status<TcpConn> Stack::Connect(Endpoint remote, Deadline deadline) {
  if (remote.port == 0 || remote.addr.is_any()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("Connect {}: the remote endpoint needs an address and a "
                                 "non-zero port",
                                 remote.ToString()));
  }
  auto c = DoConnect(remote, deadline);
  if (!c) {
    counters_.Add(c.error().code() == ErrorCode::kTimedOut ? Counter::kTimeouts : Counter::kErrors);
  } else {
    counters_.Add(Counter::kConnsConnected);
  }
  return c;
}

Status<UdpSocket> Stack::BindUdp(Endpoint local) {
  auto u = DoBindUdp(local);
  if (!u) counters_.Add(Counter::kErrors);
  return u;
}

namespace {

struct Registry {
  std::mutex mu;  // held for map edits only; never across a factory call
  std::map<std::string, StackFactory, std::less<>> factories;
};

Registry& GetRegistry() {
  static Registry* r = [] {
    auto* reg = new Registry();
    reg->factories.emplace("kernel", [](const StackOptions& o) { return CreateKernelStack(o); });
    reg->factories.emplace("loopback",
                           [](const StackOptions& o) { return CreateLoopbackStack(o); });
    return reg;
  }();
  return *r;
}

}  // namespace

Status<std::unique_ptr<Stack>> CreateStack(std::string_view name, const StackOptions& options) {
  StackFactory factory;
  {
    Registry& r = GetRegistry();
    std::lock_guard lock(r.mu);
    auto it = r.factories.find(name);
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory) {
    if (name == "dpdk") {
      return MakeError(ErrorCode::kUnavailable,
                       "network stack 'dpdk': the DPDK backend is not in this binary (built "
                       "without libdpdk, or junction::net::dpdk::RegisterDpdkStack() was not "
                       "called); install libdpdk-dev and rebuild, or use stack 'kernel'");
    }
    std::vector<std::string> known = StackNames();
    if (std::find(known.begin(), known.end(), "dpdk") == known.end()) known.push_back("dpdk");
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("network stack '{}' does not exist; known stacks: {}", name,
                                 fmt::join(known, ", ")));
  }
  return factory(options);
}

Status<void> RegisterStack(std::string name, StackFactory factory) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  if (r.factories.contains(name)) {
    return MakeError(ErrorCode::kAlreadyExists,
                     fmt::format("network stack '{}' is already registered", name));
  }
  r.factories.emplace(std::move(name), std::move(factory));
  return {};
}

std::vector<std::string> StackNames() {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [n, f] : r.factories) names.push_back(n);
  return names;
}

}  // namespace junction::net
