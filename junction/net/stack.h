// stack.h — one network stack interface, several backends, chosen by name at start-up.
//
// A Stack makes sockets (socket.h). Backends: "kernel" (Linux sockets, epoll per runtime
// core, SO_REUSEPORT listeners; unprivileged), "loopback" (in memory, for unit tests: no
// kernel sockets at all), and "dpdk" (junction/net/dpdk: a user-space stack on a DPDK port,
// registered by dpdk::RegisterDpdkStack(); without it CreateStack says kUnavailable).
//
//   auto stack = CreateStack("kernel");              // from a uthread inside Runtime::Run
//   if (!stack) { print stack.error().message(); return; }
//   auto listener = (*stack)->Listen(*Endpoint::Parse("127.0.0.1:8080"));
//   while (auto conn = listener->Accept()) Spawn([c = std::move(*conn)]() mutable { ... });
//
// Lifetime: create a stack from a uthread while a Runtime runs (it sets up per-core state on
// every core of that runtime), destroy it from a uthread of the same runtime after every
// socket it made is closed, before Run returns. Listen/Connect/BindUdp may be called from
// any uthread on any core, concurrently.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "junction/base/error.h"
#include "junction/net/counters.h"
#include "junction/net/dpdk/dpdk_options.h"
#include "junction/net/endpoint.h"
#include "junction/net/socket.h"

namespace junction::net {

// Stack::PrimeConnections' bytes_per_ring for every byte of each ring.
inline constexpr std::size_t kWholeRing = static_cast<std::size_t>(-1);

struct StackOptions {
  // kernel: the least time between two non-blocking epoll_wait calls of a busy core's poll
  // hook. A blocked (idle) core is woken by the kernel at once whatever this says.
  std::uint32_t kernel_poll_interval_us = 2;
  // kernel: the same while uthreads are queued on the core. What a pass finds then runs after
  // the queue anyway; passing after every uthread costs an epoll_wait per request and finds
  // about one event each, where one pass per this interval finds the batch (as a plain epoll
  // loop does).
  std::uint32_t kernel_busy_poll_interval_us = 25;
  // loopback: bytes each direction of a connection buffers before Write parks.
  std::size_t loopback_pipe_bytes = 256 * 1024;
  // loopback: bytes of datagrams a UDP socket queues before further ones are dropped.
  std::size_t loopback_udp_queue_bytes = 256 * 1024;
  // dpdk: EAL arguments, port, address, queues, faults (junction/net/dpdk/dpdk_options.h).
  DpdkOptions dpdk;
};

struct ListenOptions {
  // Connections the stack queues for Accept (per core on the kernel and dpdk backends):
  // handshaking plus established ones not yet accepted; SYNs beyond it are dropped and
  // counted. 1024 (Linux's historical tcp_max_syn_backlog) bounds a SYN flood on the dpdk
  // backend to about 1 MiB of connection state per core (no buffers before data, see
  // tcp/engine.h) while a listener that accepts promptly never fills it.
  int backlog = 1024;
};

class Stack {
 public:
  virtual ~Stack() = default;

  virtual std::string_view name() const = 0;

  // Listens on `local` (port 0: the stack picks a free port; see local_endpoint()).
  // Errors: address in use (kAlreadyExists, EADDRINUSE), kInvalidArgument, OS errors.
  Status<TcpListener> Listen(Endpoint local, const ListenOptions& options = {});
  // Connects to `remote`, parking until connected. Errors: refused (kIo, ECONNREFUSED),
  // kTimedOut, kInvalidArgument (port 0), OS errors.
  Status<TcpConn> Connect(Endpoint remote, Deadline deadline = Deadline::max());
  // A UDP socket bound to `local` (port 0: any free port). Errors: address in use, OS errors.
  Status<UdpSocket> BindUdp(Endpoint local);

  // Maps in, ahead of their traffic, what the first bytes of `connections_per_core` new
  // connections on each core would otherwise fault in a page at a time (1-12 µs each in a
  // VM): the first `bytes_per_ring` of each send and receive ring (kWholeRing: all of it).
  // For a load generator before its clock starts, for a node before it serves. A stack whose
  // buffers the kernel holds has nothing to do (the default). From a uthread; blocking,
  // control path only.
  virtual Status<void> PrimeConnections(std::size_t connections_per_core,
                                        std::size_t bytes_per_ring) {
    (void)connections_per_core;
    (void)bytes_per_ring;
    return {};
  }

  // Counters per core of the runtime the stack was created in, and their sum. Any thread.
  const NetCounterSet& counters() const { return counters_; }

 protected:
  explicit Stack(int num_cores) : counters_(num_cores) {}
  NetCounterSet* mutable_counters() { return &counters_; }

  virtual Status<TcpListener> DoListen(Endpoint local, const ListenOptions& options) = 0;
  virtual Status<TcpConn> DoConnect(Endpoint remote, Deadline deadline) = 0;
  virtual Status<UdpSocket> DoBindUdp(Endpoint local) = 0;

 private:
  NetCounterSet counters_;
};

using StackFactory = std::function<Status<std::unique_ptr<Stack>>(const StackOptions&)>;

// Makes the stack registered under `name`: "kernel" and "loopback" are built in; "dpdk"
// gives kUnavailable until dpdk::RegisterDpdkStack() has run. Call from a uthread.
// Errors: kNotFound (unknown name; the message lists the known ones), kUnavailable, and the
// backend's own start-up errors.
Status<std::unique_ptr<Stack>> CreateStack(std::string_view name, const StackOptions& options = {});

// Adds a backend (e.g. the dpdk one, from its library's start-up code). Any thread.
// Errors: kAlreadyExists when the name is taken.
Status<void> RegisterStack(std::string name, StackFactory factory);

// The names CreateStack accepts, sorted.
std::vector<std::string> StackNames();

}  // namespace junction::net
