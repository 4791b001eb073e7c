// dpdk_stack.h — the "dpdk" backend: a user-space Ethernet/ARP/IPv4/ICMP/UDP stack on one
// DPDK port, one queue pair and one CoreNet per runtime core.
//
//   RegisterDpdkStack();                                  // once, before CreateStack("dpdk")
//   StackOptions o;  o.dpdk.eal_args.push_back("--vdev=net_tap0,iface=fn0");
//   auto stack = CreateStack("dpdk", o);                  // from a uthread in Runtime::Run
//
// Start-up (Create): the EAL (eal.h, once per process), the port (port.h), then on every core
// an unstealable uthread registers the kthread with the EAL, builds the core's CoreNet and
// hooks it into the core's idle loop: a poll hook (every idle pass, and at least every
// poll_interval_us while uthreads run), plus the queue's rx-interrupt fd as an idle fd where
// the PMD has one (the core then sleeps in epoll until a frame comes). Every core also runs a
// ticker uthread: every 10 ms with interrupts (ARP retries, held faults), and without them
// (memif) a bounded back-off poll — 16 µs doubling to idle_poll_max_us while nothing arrives —
// so an idle node sleeps instead of spinning. While a core holds frames for a later pass
// (refused by a full TX ring, or held by the fault injector) its ticker polls every 16 µs as
// long as they move, backing off to at most 128 µs while they do not, on either kind of port.
//
// net_memif: the shared regions are populated off the cores (memif_prefault.h), by a control
// thread that sees the link come up (a client's regions exist from the start, a server maps
// its peer's when the peer connects).
//
// Shutdown (destructor, from a uthread, after every socket is closed): tickers stopped, each
// core's CoreNet stopped on its core (the hooks stay registered as no-ops; the runtime cannot
// remove them). The port stays started for a later stack in the same process.
//
// TCP: one tcp::Engine per core (junction/net/tcp, through tcp_io.h): each CoreNet is its
// core's TcpTx and hands the segments steered to it (tcp::FlowCore) to that engine; the poll
// pass runs the engine's timers, and a ticker with rx interrupts wakes no later than the
// engine's next timer. Listen/Connect/Accept are the TcpService's (tcp_socket.h).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "junction/net/dpdk/core_net.h"
#include "junction/net/dpdk/eal.h"
#include "junction/net/dpdk/memif_prefault.h"
#include "junction/net/stack.h"
#include "junction/net/tcp/tcp_socket.h"
#include "junction/sched/sched.h"
#include "junction/sched/spinlock.h"

namespace junction::net::dpdk {

// Registers "dpdk" with CreateStack. Idempotent; any thread.
void RegisterDpdkStack();

class DpdkStack final : public Stack {
 public:
  // From a uthread inside a running Runtime. Errors: invalid options (kInvalidArgument), the
  // EAL, the port or a core's setup (kUnavailable, kNotFound), each with what to change.
  static Status<std::unique_ptr<DpdkStack>> Create(const StackOptions& options);
  ~DpdkStack() override;

  std::string_view name() const override { return "dpdk"; }

  // --- test API ---
  Port& port() { return *shared_.port; }
  const EalInfo& eal() const { return eal_; }
  Ipv4Addr ip() const { return shared_.ip; }
  CoreNet& core(int i) { return *cores_[i]; }
  tcp::TcpService& tcp() { return *tcp_; }
  int num_cores() const { return shared_.num_cores; }
  // net_memif: the link's transitions to up whose shared regions the watcher populated.
  std::uint64_t memif_link_ups() const { return memif_watch_ ? memif_watch_->ups() : 0; }
  // Replaces the fault injectors of every core (from a uthread; runs on each core); frames the
  // old ones held are dropped and counted (kDropFault), and fault_stats() start again from 0.
  // Errors: invalid rates (kInvalidArgument), nothing changed.
  Status<void> SetFaults(const DpdkFaultOptions& faults);
  // Fault statistics summed over cores (rx and tx). From a uthread.
  FaultStats fault_stats();
  // Stack::PrimeConnections: the TCP rings (tcp::Engine::PrimeBuffers, on every core) and a
  // memif port's shared regions (the watcher may not have seen the link come up yet). The
  // mbuf pools need nothing: creating a pool writes every mbuf's header, so all its pages
  // are mapped in from the start.
  Status<void> PrimeConnections(std::size_t connections_per_core,
                                std::size_t bytes_per_ring) override;

  // --- for the sockets ---
  StackShared& shared() { return shared_; }
  NetCounterSet* counters_for_sockets() { return mutable_counters(); }
  sched::Spinlock& bind_lock() { return bind_lock_; }
  std::uint16_t& next_ephemeral() { return next_ephemeral_; }

 protected:
  Status<TcpListener> DoListen(Endpoint local, const ListenOptions& options) override;
  Status<TcpConn> DoConnect(Endpoint remote, Deadline deadline) override;
  Status<UdpSocket> DoBindUdp(Endpoint local) override;

 private:
  explicit DpdkStack(int num_cores) : Stack(num_cores) {}
  Status<void> OnEveryCore(const std::function<Status<void>(int)>& fn);

  DpdkOptions options_;
  EalInfo eal_;
  StackShared shared_;
  std::vector<std::shared_ptr<CoreNet>> cores_;
  std::unique_ptr<tcp::TcpService> tcp_;
  std::vector<sched::JoinHandle> tickers_;
  std::unique_ptr<MemifLinkWatcher> memif_watch_;  // net_memif ports only
  std::atomic<bool> stopping_{false};
  sched::Spinlock bind_lock_;
  std::uint16_t next_ephemeral_ = 49152;
};

}  // namespace junction::net::dpdk
