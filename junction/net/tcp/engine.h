// engine.h — one core's TCP (RFC 9293): flow table, listeners, the state machine and timers.
//
// An Engine serves the flows that steer to its core (tcp_io.h): the IP layer feeds it with
// Input and Advance; the socket adapters (tcp_socket.h) call the connection operations below.
// Every method must be called on the engine's core (or, in single-threaded tests, from one
// thread); nothing here locks or blocks. Readiness is signalled through each connection's
// IoWaiters (io_waiter.h), which a uthread on any core may wait on.
//
// What it implements: the whole state machine with simultaneous open and close and
// TIME_WAIT (and reuse of a TIME_WAIT pair by a newer SYN, RFC 9293 3.6.1); MSS and window
// scale options (RFC 7323 section 2); RTO per RFC 6298 with Karn's rule and back-off; slow
// start, congestion avoidance, fast retransmit (RFC 5681) and NewReno recovery (RFC 6582);
// delayed ACKs (every second full segment, else after delayed_ack_ns); zero-window probes
// with back-off; RST, SYN and ACK checks of RFC 5961 with rate-limited challenge ACKs; a SYN
// backlog per listener; out-of-window segments dropped and counted. Not implemented: SACK,
// timestamps (RFC 7323 section 3), urgent data (URG is ignored), keep-alives, ECN.
//
// Memory: a connection's block (ConnStateBytes(), a few hundred bytes) comes from the
// engine's pool of freed blocks, made on the SYN (or Connect); its send and receive rings
// (send/recv_buffer_bytes each) get storage only when the connection first carries data in
// that direction, from a per-engine BufferPool (buffer_pool.h), and give it back when the
// connection ends (TIME_WAIT keeps none; the pool keeps up to pooled_buffers of each kind).
// So a half-open connection of a SYN flood holds a block and a flow-table entry, never a
// ring: a full default backlog costs about a MiB per core. In the steady state (churn of no
// more connections than were alive before, up to pooled_buffers) the data path allocates
// nothing. A connection is freed by the engine once it is closed by both the
// protocol and the application (Close).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <span>
#include <unordered_map>
#include <vector>

#include "junction/base/error.h"
#include "junction/net/counters.h"
#include "junction/net/endpoint.h"
#include "junction/net/io_waiter.h"
#include "junction/net/tcp/buffer_pool.h"
#include "junction/net/tcp/tcp_counters.h"
#include "junction/net/tcp/tcp_io.h"
#include "junction/net/tcp/timer_wheel.h"

namespace junction::net::tcp {

struct EngineOptions {
  int core = 0;       // the core this engine serves
  int num_cores = 1;  // for steering ephemeral ports back to `core`
  Ipv4Addr local_addr;
  FlowSteer steer = &FlowCore;
  std::size_t send_buffer_bytes = 256 * 1024;
  std::size_t recv_buffer_bytes = 256 * 1024;
  // Free send and receive ring buffers kept per engine for reuse (each kind); more are freed.
  // 128: a burst of up to 128 new connections on a core reuses rings whose pages are mapped
  // (with 16, the rest of a 100-connection burst refaulted ~170 pages, ~2 ms in a VM, each
  // time: docs/benchmarks/load.md). Bound: 2 x 128 x 256 KiB = 64 MiB of address space per
  // core, resident only as far as the connections that used them wrote into them.
  std::size_t pooled_buffers = 128;
  std::int64_t rto_initial_ns = 1'000'000'000;  // RFC 6298 2.1
  std::int64_t rto_min_ns = 200'000'000;        // as Linux (RFC 6298 2.4 allows a lower bound)
  std::int64_t rto_max_ns = 60'000'000'000;
  std::int64_t delayed_ack_ns = 20'000'000;     // < 500 ms (RFC 9293 3.8.6.3)
  std::int64_t time_wait_ns = 60'000'000'000;   // 2 MSL
  std::int64_t fin_wait2_timeout_ns = 60'000'000'000;  // an orphaned FIN_WAIT_2 gives up
  int max_retransmits = 12;      // consecutive timeouts of one segment before ETIMEDOUT
  int max_syn_retransmits = 6;
  std::uint32_t challenge_acks_per_s = 1000;  // RFC 5961 section 7
  std::uint64_t iss_secret = 0;  // RFC 6528 F(); 0: drawn at random
  std::int64_t (*clock_ns)() = nullptr;  // nullptr: sched::MonoNs
  // The stack's counters (counters.h), where the TCP ones that have a field there are also
  // counted (retransmits, resets, drops by reason); nullptr: only the engine's own.
  NetCounterSet* net_counters = nullptr;
};

enum class TcpState {
  kClosed, kSynSent, kSynReceived, kEstablished, kFinWait1, kFinWait2, kCloseWait, kClosing,
  kLastAck, kTimeWait,
};
std::string_view TcpStateName(TcpState s);

// A snapshot of one connection's protocol state, for tests and diagnostics.
struct ConnInfo {
  TcpState state;
  std::uint32_t snd_una, snd_nxt, snd_wnd, rcv_nxt, rcv_wnd;
  std::uint32_t cwnd, ssthresh, recover;
  bool in_recovery;
  std::uint16_t mss;
  int snd_wscale, rcv_wscale;
  std::int64_t srtt_ns, rttvar_ns, rto_ns;  // srtt 0: no sample yet
  std::uint64_t rtt_samples, retransmits;
  std::size_t send_queued, recv_ready;
};

// What an engine's connections hold in memory now (memory()).
struct EngineMemory {
  std::size_t conns = 0;             // live connection blocks (incl. half-open and TIME_WAIT)
  std::size_t conn_state_bytes = 0;  // conns * ConnStateBytes()
  std::size_t ring_bytes = 0;        // send and receive ring storage held by connections
  std::size_t ring_bytes_kept = 0;   // free ring storage the pools keep for reuse
};

struct Conn;     // engine.cc
struct ListenState;  // conn.h

// Told when a listener on this engine has a connection ready for Accept. Called on the
// engine's core, from Input; must not block (it may Unpark).
class AcceptNotify {
 public:
  virtual ~AcceptNotify() = default;
  virtual void Ready(int core) = 0;
};

class Engine final : public TcpRxSink {
 public:
  Engine(const EngineOptions& options, TcpTx* tx);
  ~Engine() override;  // frees every connection (without sending anything)
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- from the IP layer (tcp_io.h) ---
  void Input(const RxSegment& segment) override;
  void Advance(std::int64_t now_ns) override;
  std::int64_t NextTimerNs() const override;

  // --- listeners ---
  // Accepts SYNs to (addr or any, port) on this core, queueing at most `backlog` connections
  // (handshaking or established, not yet accepted). Errors: kAlreadyExists (port listened).
  Status<void> Listen(Endpoint local, int backlog, AcceptNotify* notify);
  // Stops listening; connections not yet accepted are reset.
  void Unlisten(std::uint16_t port);
  // An established connection of the listener on `port`, now owned by the caller (who must
  // Close it), or nullptr when none is ready.
  Conn* Accept(std::uint16_t port);

  // --- active open ---
  // Sends a SYN to `remote` from an ephemeral port that steers back to this core. The caller
  // owns the connection (Close it) and waits for ConnectResult on its write waiter.
  // Errors: kResourceExhausted (no free port steers here), kInvalidArgument (port 0).
  Status<Conn*> Connect(Endpoint remote);
  // Ok once established (or later states); kWouldBlock while the handshake runs; refused,
  // reset or timed out otherwise.
  Status<void> ConnectResult(Conn* c) const;

  // --- connection operations (the caller owns c) ---
  // Copies received bytes out: >0 bytes, 0 at end of stream, kWouldBlock when none yet,
  // or the error that ended the connection (reset, timed out).
  Status<std::size_t> Recv(Conn* c, std::span<std::byte> buf);
  // Whether Recv into a non-empty buffer would return at once (bytes, end of stream or an
  // error) rather than kWouldBlock. A reader that finds nothing asks this first: a waiting
  // read then builds no error value (on a dpdk round trip, every read that finds the response
  // not yet in, and every server read between requests).
  bool RecvReady(const Conn* c) const;
  // Queues as much of buf as the send buffer takes (kWouldBlock when none), sends what the
  // windows allow. Errors: kClosed after Shutdown, reset/timed out, broken pipe.
  Status<std::size_t> Send(Conn* c, std::span<const std::byte> buf);
  // Queues a FIN after the data. Idempotent.
  Status<void> Shutdown(Conn* c);
  // Sends what the TX side buffered (TcpTx::Flush): the end of a socket call.
  void FlushTx() { tx_->Flush(); }
  // The application is done with c: the engine sends FIN (or RST if received data is unread,
  // RFC 9293 3.10.4 / RFC 2525 2.17) and frees c when the protocol is done with it.
  void Close(Conn* c);
  // Sends RST now and frees c when the caller closes it.
  void Abort(Conn* c);

  IoWaiter& read_waiter(Conn* c);
  IoWaiter& write_waiter(Conn* c);
  FourTuple tuple(const Conn* c) const;
  ConnInfo Info(const Conn* c) const;

  const TcpCounters& counters() const { return counters_; }
  std::size_t num_conns() const { return flows_.size(); }
  EngineMemory memory() const;
  // Readies send and receive rings for `connections` connections ahead of their traffic
  // (BufferPool::Prime): for a load generator, before its clock starts. On the engine's core;
  // allocates and makes system calls, so never on the data path.
  void PrimeBuffers(std::size_t connections, std::size_t bytes_per_ring);
  // The bytes of one connection's block (its TCB, without ring storage).
  static std::size_t ConnStateBytes();
  int core() const { return opt_.core; }
  std::uint16_t mss() const { return mss_; }
  std::int64_t now_ns() const { return now_; }

 private:
  struct TupleHash {
    std::size_t operator()(const FourTuple& t) const { return FlowHash(t); }
  };
  friend struct EngineInternals;

  std::int64_t Now();
  // Removes c's entry from flows_ when the entry is c's (see last_conn_, flow_erasures_).
  void EraseFlow(Conn* c);
  // Takes a reading the caller already made (a poll pass's); never moves now_ back, since a
  // pass-start reading may trail one Now() took since.
  void SetNow(std::int64_t now_ns) {
    if (now_ns > now_) now_ = now_ns;
  }
  void Count(TcpCounter c, std::uint64_t n = 1);
  std::uint32_t NewIss(const FourTuple& t);
  Conn* NewConn(const FourTuple& t);
  void Free(Conn* c);
  void EnsureSndBuf(Conn* c);   // storage for the send ring, before bytes go in
  void EnsureRcvBuf(Conn* c);   // storage for the receive ring, before bytes go in
  void ReleaseBuffers(Conn* c);  // gives back the storage of rings that are empty
  void MaybeFree(Conn* c);
  void Abandon(Conn* c, int err);  // protocol over with an error: wake, maybe free

  // tcp_in.cc
  void InputListen(ListenState* l, const FourTuple& t, const struct Segment& s);
  void InputSynSent(Conn* c, const Segment& s);
  void InputSynchronized(Conn* c, const Segment& s);
  bool ProcessAck(Conn* c, const Segment& s);
  void ProcessData(Conn* c, const Segment& s);
  void ProcessFin(Conn* c);
  void EnterTimeWait(Conn* c);
  void ChallengeAck(Conn* c);
  void ResetFor(const FourTuple& t, const Segment& s);  // RST answering an unwanted segment
  void OnTimer(Conn* c);

  // tcp_out.cc
  void Output(Conn* c);            // data, FIN and ACKs as the windows allow
  void SendAck(Conn* c);
  void SendSyn(Conn* c);           // SYN or SYN,ACK by state
  void SendRst(Conn* c);
  bool SendSegment(Conn* c, std::uint32_t seq, std::uint8_t fl, std::size_t data_off,
                   std::size_t data_len);
  void SendBareRst(const FourTuple& t, std::uint32_t seq, std::uint32_t ack, bool with_ack);
  void Retransmit(Conn* c);        // the first unacknowledged segment
  std::uint16_t AdvertisedWindow(Conn* c);
  void ArmTimer(Conn* c);
  void BlockTx(Conn* c);       // Alloc refused c's frame: retry it on the next Advance
  void RetryBlockedTx();

  EngineOptions opt_;
  TcpTx* tx_;
  std::uint16_t mss_;  // ours: mtu - 40
  std::int64_t now_ = 0;
  TimerWheel wheel_;
  TcpCounters counters_;
  // Connection blocks and flow-table nodes come from here (freed ones are reused), so a SYN
  // does not go to the allocator once a core has seen as many connections before.
  std::pmr::unsynchronized_pool_resource conn_mem_;
  std::pmr::unordered_map<FourTuple, Conn*, TupleHash> flows_{&conn_mem_};
  // The flow the last segment in belonged to: a request/response exchange keeps hitting one
  // flow, and this skips its hash and probe (~10 ns a segment). Cleared when that flow leaves
  // flows_ (EraseFlow) or its tuple is mapped anew (NewConn).
  FourTuple last_tuple_{};
  Conn* last_conn_ = nullptr;
  // Entries ever erased from flows_: a segment's handling that erased none left its flow in
  // place, with no lookup to find that out.
  std::uint64_t flow_erasures_ = 0;
  BufferPool snd_pool_;
  BufferPool rcv_pool_;
  std::size_t live_conns_ = 0;
  std::unordered_map<std::uint16_t, std::unique_ptr<ListenState>> listens_;
  std::uint32_t next_port_;
  Conn* all_ = nullptr;  // intrusive list of every connection not yet freed
  // Connections whose last Output stopped because TcpTx::Alloc refused a frame (the port's TX
  // side is full): Advance runs their Output again on the next pass. A list, not a timer: the
  // wheel's 1 ms tick is an age at memif speed, and a flow with nothing in flight has no
  // other event to wake it. Two vectors swapped so a retry pass does not allocate.
  std::vector<Conn*> tx_blocked_, tx_retrying_;
  std::int64_t challenge_window_start_ = 0;
  std::uint32_t challenge_acks_in_window_ = 0;
};

}  // namespace junction::net::tcp
