// tcp_io.h — the boundary between the user-space TCP engine and the IP layer under it.
//
// The engine (engine.h) is backend-independent: it knows TCP segments, IPv4 addresses and
// nanoseconds, never mbufs, Ethernet or ARP. The IP layer (junction/net/dpdk, or the
// in-memory link of the tests) gives it received segments through TcpRxSink and lends it
// transmit buffers through TcpTx. Everything here is per core:
//
//   Core affinity. There is one Engine per runtime core, created for that core and only ever
//   called from uthreads or hooks running on it (the core's poll hook and the uthreads the
//   socket adapters run there). An engine is never shared: it has no locks, and nothing in it
//   is touched by another core. Work that starts on another core (a uthread that was stolen,
//   a Connect from any core) is marshalled to the owning core by the socket adapters
//   (tcp_socket.h), never done in place.
//
//   RX. The IP layer calls TcpRxSink::Input once per received TCP segment, on the core that
//   owns the flow (see steering below), after it checked the IPv4 header (version, header
//   checksum, lengths, not a fragment). `tcp` spans exactly the IPv4 payload: TCP header,
//   options and data. It lives in the mbuf only for the duration of the call: the engine
//   copies the payload into the connection's receive buffer and keeps no pointer into it.
//   Input never blocks, never allocates on the data path (a new connection allocates its
//   state once, on the SYN), and may call TcpTx (an ACK, a RST) before it returns.
//
//   TX. The engine asks TcpTx::Alloc for a buffer inside a fresh mbuf, writes the TCP header
//   and payload into it, and hands it back with Send (or Discard). No allocation per packet
//   on either side. Checksum: when TcpTx::checksum_mode() is kSoftware the engine writes the
//   full TCP checksum over the IPv4 pseudo-header; when it is kOffloadPseudoHeader the engine
//   writes only the folded pseudo-header sum (what DPDK's rte_ipv4_phdr_cksum gives and a
//   NIC with RTE_ETH_TX_OFFLOAD_TCP_CKSUM expects) and the IP layer sets the mbuf flags.
//
//   Timers. The engine keeps its own per-core timer structure (a hashed wheel of 1 ms ticks,
//   timer_wheel.h); it never arms runtime timers. The core's poll hook calls
//   TcpRxSink::Advance(now_ns) on every pass with sched::MonoNs(); NextTimerNs() says when it
//   next needs a call, so an idle core may sleep until then.
//
//   Steering. The IP layer delivers a segment to the core FlowCore(tuple, num_cores), where
//   tuple is the flow as the node sees it (local = this node's address and port). A listener
//   exists on every core; a SYN is handled by the core its 4-tuple steers to, and that core
//   owns the connection for its whole life. Connect picks an ephemeral local port for which
//   FlowCore(tuple) is the core the connection is made on, so that the peer's replies steer
//   back to it. The IP layer must use FlowCore (software steering), or an RSS configuration
//   whose queue choice it can compute and pass in as a FlowSteer of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "junction/net/endpoint.h"

namespace junction::net::tcp {

// A TCP flow as this node sees it.
struct FourTuple {
  Ipv4Addr local_addr;
  std::uint16_t local_port = 0;
  Ipv4Addr remote_addr;
  std::uint16_t remote_port = 0;

  constexpr bool operator==(const FourTuple&) const = default;
};

// A 32-bit hash of the tuple (a multiply-xorshift mix, well spread in every bit). Pure;
// the same on every core and in every process.
inline std::uint32_t FlowHash(const FourTuple& t) {
  std::uint64_t x = (std::uint64_t{t.local_addr.host_order()} << 32) | t.remote_addr.host_order();
  x ^= (std::uint64_t{t.local_port} << 16 | t.remote_port) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

// The core (0 <= core < num_cores) that owns the flow under software steering.
inline int FlowCore(const FourTuple& t, int num_cores) {
  return static_cast<int>(FlowHash(t) % static_cast<std::uint32_t>(num_cores));
}

// How flows map to cores; the default is FlowCore. An IP layer that steers otherwise (RSS)
// passes its own. Called on any core; must be pure.
using FlowSteer = int (*)(const FourTuple& t, int num_cores);

// One received TCP segment (see RX above).
struct RxSegment {
  Ipv4Addr src;                     // the peer
  Ipv4Addr dst;                     // this node
  std::span<const std::byte> tcp;   // TCP header + options + payload; valid during the call
  bool checksum_verified = false;   // the NIC checked the TCP checksum and found it good
  // When it arrived (sched::MonoNs()), if the IP layer read the clock for its poll pass
  // already; 0: the engine reads it. Never later than the engine's next reading.
  std::int64_t now_ns = 0;
};

// A transmit buffer lent by the IP layer.
struct TxFrame {
  std::span<std::byte> tcp;  // room for TCP header + options + payload
  void* handle = nullptr;    // the IP layer's (an mbuf); opaque to the engine
};

enum class TxChecksum {
  kSoftware,             // the engine writes the full checksum
  kOffloadPseudoHeader,  // the engine writes the pseudo-header sum; the NIC finishes it
};

// What the IP layer offers the engine of one core. Called only on that core.
class TcpTx {
 public:
  virtual ~TcpTx() = default;
  // A buffer for a segment of at most `len` bytes (TCP header + payload; len <= mtu() - 20)
  // from `src` to `dst`, with room in front for the IPv4 and Ethernet headers. nullopt when
  // no buffer is free now, or when the port's TX side is full (refuse then rather than drop
  // after Send): the engine counts it (kTxNoBuffer), leaves the segment unsent and runs the
  // flow's output again on its next Advance. Never blocks.
  virtual std::optional<TxFrame> Alloc(Ipv4Addr src, Ipv4Addr dst, std::size_t len) = 0;
  // Sends the first `len` bytes of frame.tcp (len <= what Alloc was asked for). Ownership of
  // the frame passes to the IP layer, which adds the IPv4 header (protocol 6, total length),
  // resolves the next hop (queueing while ARP resolves) and puts it on the core's TX burst,
  // flushed by the end of the current poll pass.
  virtual void Send(TxFrame frame, std::size_t len) = 0;
  // Gives back a frame that will not be sent.
  virtual void Discard(TxFrame frame) = 0;
  // Puts what Send buffered on the wire now. The socket layer calls it (through
  // Engine::FlushTx) at the end of every socket call, so a uthread's segments leave when its
  // call returns instead of at the next poll pass (~1 us less per RPC round trip over memif).
  // On the engine's core only. Default: nothing is buffered.
  virtual void Flush() {}
  virtual TxChecksum checksum_mode() const = 0;
  // The IPv4 MTU of the port (1500 on Ethernet); the engine's MSS is mtu() - 40.
  virtual std::uint16_t mtu() const = 0;
};

// What the engine of one core offers the IP layer. Called only on that core.
class TcpRxSink {
 public:
  virtual ~TcpRxSink() = default;
  // One received segment (see RX above). Malformed or unwanted segments are dropped and
  // counted by reason (counters.h); never a crash.
  virtual void Input(const RxSegment& segment) = 0;
  // Runs the timers due at `now_ns` (sched::MonoNs()). Call on every poll pass.
  virtual void Advance(std::int64_t now_ns) = 0;
  // A lower bound on when the next timer is due (INT64_MAX if none): never more than the 1 ms
  // tick late, and early where a deadline moved later or was cancelled since it was filed
  // (the timer wheel refiles those lazily, when their old slot comes: one early wake-up).
  // Costs up to ~1000 checks: call it when about to idle, not on every pass.
  virtual std::int64_t NextTimerNs() const = 0;
};

// --- checksums (RFC 1071), for both sides ---

// The one's-complement sum of `data` added to `sum` (not folded, not complemented).
std::uint32_t ChecksumAdd(std::uint32_t sum, std::span<const std::byte> data);
// Folds a 32-bit sum to 16 bits (not complemented).
std::uint16_t ChecksumFold(std::uint32_t sum);
// The IPv4 pseudo-header sum for protocol 6 and a TCP length (not folded).
std::uint32_t PseudoHeaderSum(Ipv4Addr src, Ipv4Addr dst, std::size_t tcp_len);
// Whether a received segment's checksum is right (the sum over pseudo-header and segment
// folds to 0xFFFF).
bool TcpChecksumOk(Ipv4Addr src, Ipv4Addr dst, std::span<const std::byte> tcp);

}  // namespace junction::net::tcp
