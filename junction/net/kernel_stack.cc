// kernel_stack.cc — the kernel backend's start-up, shutdown and listen-port claims.
#include "junction/net/kernel_stack.h"

#include <fmt/format.h>

#include <set>

#include "junction/net/kernel_tcp.h"
#include "junction/net/kernel_udp.h"
#include "junction/net/net_error.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace junction::net {
namespace {

// Listening endpoints claimed by kernel-backend listeners of this process.
struct PortClaims {
  sched::Spinlock lock;
  std::set<Endpoint> claimed;
};
PortClaims& Claims() {
  static PortClaims* c = new PortClaims();
  return *c;
}
bool Overlaps(Endpoint a, Endpoint b) {
  return a.port == b.port && (a.addr == b.addr || a.addr.is_any() || b.addr.is_any());
}

}  // namespace

Status<std::unique_ptr<Stack>> CreateKernelStack(const StackOptions& options) {
  auto s = KernelStack::Create(options);
  if (!s) return std::unexpected(s.error());
  return std::unique_ptr<Stack>(std::move(*s));
}

Status<std::unique_ptr<KernelStack>> KernelStack::Create(const StackOptions& options) {
  sched::Runtime* rt = sched::Runtime::Current();
  if (rt == nullptr || !sched::InRuntime()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "kernel stack: create it from a uthread inside Runtime::Run (it starts an "
                     "epoll poller on every core of the runtime)");
  }
  const int n = rt->num_cores();
  std::unique_ptr<KernelStack> stack(new KernelStack(n));
  stack->pollers_.resize(n);
  std::vector<Status<void>> results(n);
  std::vector<sched::JoinHandle> handles;
  for (int i = 0; i < n; ++i) {
    auto h = sched::Spawn(
        [&, i] {
          auto p = CorePoller::StartOnThisCore(options.kernel_poll_interval_us,
                                                options.kernel_busy_poll_interval_us);
          if (p) {
            stack->pollers_[i] = std::move(*p);
          } else {
            results[i] = std::unexpected(p.error());
          }
        },
        {.core = i, .account = sched::accounts::kNet, .stealable = false});
    if (!h) {
      results[i] = std::unexpected(h.error());
      continue;
    }
    handles.push_back(std::move(*h));
  }
  for (auto& h : handles) h.Join();
  for (auto& r : results) {
    if (!r) return std::unexpected(r.error());  // started pollers are stopped by ~KernelStack
  }
  return stack;
}

KernelStack::~KernelStack() {
  if (!sched::InRuntime()) {
    // The runtime has stopped: no hook runs any more, the pollers are freed with it.
    return;
  }
  std::vector<sched::JoinHandle> handles;
  for (int i = 0; i < static_cast<int>(pollers_.size()); ++i) {
    if (!pollers_[i]) continue;
    CorePoller* p = pollers_[i].get();
    auto h = sched::Spawn([p] { p->Stop(); },
                          {.core = i, .account = sched::accounts::kNet, .stealable = false});
    if (h) handles.push_back(std::move(*h));
  }
  for (auto& h : handles) h.Join();
}

CorePoller& KernelStack::local_poller() {
  const int c = sched::CurrentCore();
  return *pollers_[c < 0 ? 0 : c % pollers_.size()];
}

Status<void> KernelStack::ClaimListenPort(Endpoint ep) {
  PortClaims& c = Claims();
  std::lock_guard lock(c.lock);
  for (const Endpoint& e : c.claimed) {
    if (Overlaps(e, ep)) {
      return std::unexpected(AddressInUseError(fmt::format(
          "Listen {} (this process already listens on {})", ep.ToString(), e.ToString())));
    }
  }
  c.claimed.insert(ep);
  return {};
}

void KernelStack::ReleaseListenPort(Endpoint ep) {
  PortClaims& c = Claims();
  std::lock_guard lock(c.lock);
  c.claimed.erase(ep);
}

Status<TcpListener> KernelStack::DoListen(Endpoint local, const ListenOptions& options) {
  return kernel::Listen(*this, local, options);
}

Status<TcpConn> KernelStack::DoConnect(Endpoint remote, Deadline deadline) {
  return kernel::Connect(*this, remote, deadline);
}

Status<UdpSocket> KernelStack::DoBindUdp(Endpoint local) {
  return kernel::BindUdp(*this, local);
}

}  // namespace junction::net
