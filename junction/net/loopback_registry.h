// loopback_registry.h — the loopback backend's shared state: who listens and who is bound
// where (internal to the loopback backend).
#pragma once

#include <deque>
#include <map>
#include <memory>

#include "junction/net/counters.h"
#include "junction/net/endpoint.h"
#include "junction/net/loopback_pipe.h"
#include "junction/net/stack.h"

namespace junction::net::loopback {

// Both directions of one connection. Side 0 is the connecting end, side 1 the accepted one.
struct ConnPair {
  ConnPair(std::size_t pipe_bytes, Endpoint client, Endpoint server)
      : pipes{std::make_unique<Pipe>(pipe_bytes), std::make_unique<Pipe>(pipe_bytes)},
        ends{client, server} {}
  Pipe& out(int side) { return *pipes[side]; }     // what `side` writes
  Pipe& in(int side) { return *pipes[1 - side]; }  // what `side` reads
  // Closes `side` as TCP would: RST if it leaves unread data (or abort is set), else FIN.
  void Close(int side, bool abort);

  std::unique_ptr<Pipe> pipes[2];  // pipes[s] carries side s's bytes to the other side
  Endpoint ends[2];
};

struct ListenState {
  explicit ListenState(Endpoint ep, std::size_t bl) : local(ep), backlog(bl) {}
  sched::Spinlock lock;
  sched::WaitQueue acceptors{&lock};
  sched::WaitQueue connectors{&lock};  // parked while the backlog is full
  std::deque<std::shared_ptr<ConnPair>> pending;
  const Endpoint local;
  const std::size_t backlog;
  bool closed = false;
};

struct UdpState;

struct Registry {
  explicit Registry(const StackOptions& o) : options(o) {}

  // Finds a free port for `addr` in `m` (49152..65535). Called with lock held. 0 if none.
  template <typename Map>
  std::uint16_t FreePortLocked(const Map& m, Ipv4Addr addr);

  sched::Spinlock lock;  // guards the maps and next_port; never held across a park
  std::map<Endpoint, std::shared_ptr<ListenState>> listeners;
  std::map<Endpoint, std::shared_ptr<UdpState>> udp;
  std::uint16_t next_port = 49152;
  const StackOptions options;
};

template <typename Map>
std::uint16_t Registry::FreePortLocked(const Map& m, Ipv4Addr addr) {
  for (int tries = 0; tries < 16384; ++tries) {
    const std::uint16_t p = next_port;
    next_port = next_port == 65535 ? 49152 : next_port + 1;
    if (!m.contains(Endpoint{addr, p}) && !m.contains(Endpoint{Ipv4Addr::Any(), p})) return p;
  }
  return 0;
}

// Looks `ep` up exactly, then as 0.0.0.0 with the same port. Called with the lock held.
template <typename Map>
typename Map::mapped_type FindLocked(const Map& m, Endpoint ep) {
  auto it = m.find(ep);
  if (it == m.end()) it = m.find(Endpoint{Ipv4Addr::Any(), ep.port});
  return it == m.end() ? nullptr : it->second;
}

// Whether a new binding `ep` collides with one in `m`. Called with the lock held.
template <typename Map>
bool CollidesLocked(const Map& m, Endpoint ep) {
  for (const auto& [e, v] : m) {
    if (e.port == ep.port && (e.addr == ep.addr || e.addr.is_any() || ep.addr.is_any())) {
      return true;
    }
  }
  return false;
}

// See Stack::BindUdp. `counters` outlives the socket.
Status<UdpSocket> BindUdp(const std::shared_ptr<Registry>& reg, NetCounterSet* counters,
                          Endpoint local);

}  // namespace junction::net::loopback
