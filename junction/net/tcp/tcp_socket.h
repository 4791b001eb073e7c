// tcp_socket.h — TcpConn and TcpListener (socket.h) over the per-core TCP engines.
//
// A TcpService owns one Engine per runtime core and makes the socket handles a Stack returns.
// The IP layer (the dpdk backend, or the tests' in-memory link) creates it with one TcpTx per
// core, and from each core's poll hook calls engine(core).Input for the segments steered there
// and engine(core).Advance(now) on every pass.
//
//   auto tcp = TcpService::Create(options, tx_per_core, &counters);   // from a uthread
//   // core c's poll hook:  tcp->engine(c).Input(seg); ...; tcp->engine(c).Advance(MonoNs());
//   auto listener = tcp->Listen(Endpoint{addr, 80}, {});
//   auto conn = tcp->Connect(remote, deadline);
//
// Core affinity: we marshal, we do not pin. An engine is touched only on its own core. A
// connection belongs to the core its 4-tuple steers to (tcp_io.h); a uthread may call its
// handle from any core (it may have been stolen, or spawned elsewhere): an operation runs
// inline when the caller is on the owning core, and otherwise as a short uthread spawned on
// the owning core (SpawnOptions{.core = owner, .stealable = false}) that the caller joins.
// Waiting happens on the caller's core, parked on the connection's IoWaiter, which the
// owning core notifies. Spawning a uthread with SpawnOptions{.core = conn.owner} for a
// connection's handler avoids the hop; it is a speed-up, never needed for correctness.
// Connect makes the connection on the caller's core. A listener listens on every core; Accept
// takes ready connections from its own core first, then from the others.
//
// Lifetime: create from a uthread while the runtime runs; destroy from a uthread after every
// socket it made was closed and after the poll hooks stop calling the engines.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "junction/base/error.h"
#include "junction/net/counters.h"
#include "junction/net/socket.h"
#include "junction/net/stack.h"
#include "junction/net/tcp/engine.h"

namespace junction::net::tcp {

class TcpService {
 public:
  // `base` is used for every engine with core and num_cores set per core; tx[i] is core i's
  // (tx.size() cores). `counters` is the stack's (socket.h counts bytes and errors into it).
  // Errors: kInvalidArgument (no cores, a null tx).
  static Status<std::unique_ptr<TcpService>> Create(const EngineOptions& base,
                                                    std::vector<TcpTx*> tx,
                                                    NetCounterSet* counters);
  ~TcpService();
  TcpService(const TcpService&) = delete;
  TcpService& operator=(const TcpService&) = delete;

  int num_cores() const { return static_cast<int>(engines_.size()); }
  // Core `core`'s engine: call only on that core (see above).
  Engine& engine(int core) { return *engines_[static_cast<std::size_t>(core)]; }

  // Listens on every core. Port 0 picks a free port. Errors: address in use, kInvalidArgument.
  Status<TcpListener> Listen(Endpoint local, const ListenOptions& options);
  // Connects from the caller's core; parks until established, refused, or the deadline.
  Status<TcpConn> Connect(Endpoint remote, Deadline deadline);

  // Summed over cores, or one core's; any thread.
  TcpCounterSnapshot counters() const;
  TcpCounterSnapshot counters(int core) const { return engines_[static_cast<std::size_t>(core)]->counters().Snapshot(); }

  // --- for the adapters (tcp_socket.cc) ---
  NetCounterSet* net_counters() const { return counters_; }
  void ReleasePort(std::uint16_t port);

 private:
  TcpService() = default;

  std::vector<std::unique_ptr<Engine>> engines_;
  NetCounterSet* counters_ = nullptr;
  Ipv4Addr local_addr_;
  std::mutex ports_mu_;  // Listen/Close only, never the data path
  std::set<std::uint16_t> listen_ports_;
};

}  // namespace junction::net::tcp
