// kernel_stack.h — the "kernel" backend: Linux sockets driven by per-core epoll sets.
//
// Works unprivileged. Creating it spawns one unstealable uthread per runtime core that starts
// that core's CorePoller; destroying it stops them the same way. Sockets are non-blocking and
// registered edge-triggered once, in the poller of the core that created them (the caller's
// core for Connect, Accept and BindUdp). A uthread that gets EAGAIN parks on an IoWaiter and
// the poller unparks it. Listeners hold one SO_REUSEPORT socket per core; Accept takes from the
// caller's core's socket first, then from the others, so one acceptor sees every connection.
// Listening on a port that another process of the same user holds with SO_REUSEPORT joins its
// group (the kernel then shares connections between both); a port held without it, or by a
// listener of this process, is refused as address in use.
#pragma once

#include <memory>
#include <vector>

#include "junction/net/kernel_poller.h"
#include "junction/net/stack.h"
#include "junction/sched/spinlock.h"

namespace junction::net {

Status<std::unique_ptr<Stack>> CreateKernelStack(const StackOptions& options);

class KernelStack final : public Stack {
 public:
  // From a uthread inside a running Runtime. Errors: epoll creation or hook registration.
  static Status<std::unique_ptr<KernelStack>> Create(const StackOptions& options);
  ~KernelStack() override;

  std::string_view name() const override { return "kernel"; }

  // --- for the kernel backend's sockets ---
  int num_cores() const { return static_cast<int>(pollers_.size()); }
  CorePoller& poller(int core) { return *pollers_[core]; }
  // The poller of the calling uthread's core.
  CorePoller& local_poller();
  // Claims `ep` for a listener of this process (SO_REUSEPORT alone would let a second
  // listener of ours share the port silently). Errors: address in use.
  Status<void> ClaimListenPort(Endpoint ep);
  void ReleaseListenPort(Endpoint ep);
  NetCounterSet* counters_for_sockets() { return mutable_counters(); }

 protected:
  Status<TcpListener> DoListen(Endpoint local, const ListenOptions& options) override;
  Status<TcpConn> DoConnect(Endpoint remote, Deadline deadline) override;
  Status<UdpSocket> DoBindUdp(Endpoint local) override;

 private:
  explicit KernelStack(int num_cores) : Stack(num_cores) {}

  std::vector<std::shared_ptr<CorePoller>> pollers_;
};

}  // namespace junction::net
