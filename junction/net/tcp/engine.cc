// engine.cc — the engine's API: flow table, listeners, active open, connection operations,
// timers. Segment processing is in tcp_in.cc, segment building and sending in tcp_out.cc.
#include "junction/net/tcp/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "junction/net/net_error.h"
#include "junction/net/tcp/conn.h"
#include "junction/net/tcp/segment.h"
#include "junction/sched/tsc.h"

namespace junction::net::tcp {

std::string_view TcpStateName(TcpState s) {
  switch (s) {
    case TcpState::kClosed: return "CLOSED";
    case TcpState::kSynSent: return "SYN-SENT";
    case TcpState::kSynReceived: return "SYN-RECEIVED";
    case TcpState::kEstablished: return "ESTABLISHED";
    case TcpState::kFinWait1: return "FIN-WAIT-1";
    case TcpState::kFinWait2: return "FIN-WAIT-2";
    case TcpState::kCloseWait: return "CLOSE-WAIT";
    case TcpState::kClosing: return "CLOSING";
    case TcpState::kLastAck: return "LAST-ACK";
    case TcpState::kTimeWait: return "TIME-WAIT";
  }
  return "?";
}

std::string_view TcpCounterName(TcpCounter c) {
  static constexpr std::string_view kNames[] = {
      "segments_in", "segments_out", "retransmits", "fast_retransmits",
      "partial_ack_retransmits", "rto_timeouts", "zero_window_probes", "delayed_acks",
      "resets_in", "resets_out", "challenge_acks", "conns_opened", "conns_aborted",
      "drop_checksum", "drop_malformed", "drop_out_of_window", "drop_backlog", "drop_no_conn",
      "drop_bad_ack", "drop_rate_limited", "tx_no_buffer", "tx_deferred"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(TcpCounter::kNumCounters));
  return kNames[static_cast<int>(c)];
}

namespace {
constexpr std::uint32_t kEphemeralFirst = 49152;  // IANA dynamic ports (RFC 6335)
constexpr std::uint32_t kEphemeralCount = 65536 - kEphemeralFirst;

std::uint64_t Mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7FB5D329728EA185ull;
  x ^= x >> 27;
  x *= 0x81DADEF4BC2DD44Dull;
  x ^= x >> 33;
  return x;
}
}  // namespace

Engine::Engine(const EngineOptions& options, TcpTx* tx)
    : opt_(options),
      tx_(tx),
      mss_(static_cast<std::uint16_t>(tx->mtu() - 40)),
      now_(opt_.clock_ns != nullptr ? opt_.clock_ns() : sched::MonoNs()),
      wheel_(now_),
      snd_pool_(opt_.send_buffer_bytes, opt_.pooled_buffers),
      rcv_pool_(opt_.recv_buffer_bytes + Conn::kRcvSlack, opt_.pooled_buffers) {
  if (opt_.iss_secret == 0) opt_.iss_secret = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  next_port_ = static_cast<std::uint32_t>(Mix(opt_.iss_secret) % kEphemeralCount);
  flows_.reserve(1024);
}

Engine::~Engine() {
  while (all_ != nullptr) {
    Conn* c = all_;
    all_ = c->all_next;
    wheel_.Cancel(c);
    c->~Conn();  // its rings' storage goes with it
    conn_mem_.deallocate(c, sizeof(Conn), alignof(Conn));
  }
}

std::size_t Engine::ConnStateBytes() { return sizeof(Conn); }

EngineMemory Engine::memory() const {
  return EngineMemory{.conns = live_conns_,
                      .conn_state_bytes = live_conns_ * sizeof(Conn),
                      .ring_bytes = snd_pool_.bytes_in_use() + rcv_pool_.bytes_in_use(),
                      .ring_bytes_kept = snd_pool_.bytes_kept() + rcv_pool_.bytes_kept()};
}

void Engine::PrimeBuffers(std::size_t connections, std::size_t bytes_per_ring) {
  snd_pool_.Prime(connections, bytes_per_ring);
  rcv_pool_.Prime(connections, bytes_per_ring);
}

void Engine::EnsureSndBuf(Conn* c) {
  if (!c->sndbuf.has_storage()) c->sndbuf.Attach(snd_pool_.Take());
}

void Engine::EnsureRcvBuf(Conn* c) {
  if (!c->rcvbuf.has_storage()) c->rcvbuf.Attach(rcv_pool_.Take());
}

void Engine::ReleaseBuffers(Conn* c) {
  if (c->sndbuf.size() == 0) snd_pool_.Give(c->sndbuf.Detach());
  if (c->rcvbuf.size() == 0) rcv_pool_.Give(c->rcvbuf.Detach());
}

std::int64_t Engine::Now() {
  now_ = opt_.clock_ns != nullptr ? opt_.clock_ns() : sched::MonoNs();
  return now_;
}

void Engine::Count(TcpCounter c, std::uint64_t n) {
  counters_.Add(c, n);
  if (opt_.net_counters == nullptr) return;
  Counter m;
  switch (c) {
    case TcpCounter::kRetransmits: m = Counter::kTcpRetransmits; break;
    case TcpCounter::kResetsIn:
    case TcpCounter::kResetsOut: m = Counter::kTcpResets; break;
    case TcpCounter::kDropChecksum: m = Counter::kDropBadChecksum; break;
    case TcpCounter::kDropMalformed: m = Counter::kDropMalformed; break;
    case TcpCounter::kDropNoConn: m = Counter::kDropNoSocket; break;
    case TcpCounter::kTxNoBuffer: m = Counter::kDropNoBuffer; break;
    case TcpCounter::kDropOutOfWindow: m = Counter::kTcpDropOutOfWindow; break;
    case TcpCounter::kDropBacklog: m = Counter::kTcpDropBacklog; break;
    case TcpCounter::kChallengeAcks: m = Counter::kTcpChallengeAcks; break;
    default: return;
  }
  opt_.net_counters->Add(m, n);
}

// RFC 6528: ISN = M + F(4-tuple, secret), M a 4 us clock.
std::uint32_t Engine::NewIss(const FourTuple& t) {
  const std::uint64_t f = Mix(FlowHash(t) ^ opt_.iss_secret);
  return static_cast<std::uint32_t>(f + static_cast<std::uint64_t>(now_ / 4000));
}

Conn* Engine::NewConn(const FourTuple& t) {
  // No ring storage yet (EnsureSndBuf / EnsureRcvBuf): a half-open connection is this block.
  Conn* c = new (conn_mem_.allocate(sizeof(Conn), alignof(Conn)))
      Conn(t, opt_.send_buffer_bytes, opt_.recv_buffer_bytes);
  ++live_conns_;
  c->rto = opt_.rto_initial_ns;
  while ((c->rcv_limit >> c->rcv_wscale) > 65535 && c->rcv_wscale < 14) ++c->rcv_wscale;
  c->all_next = all_;
  if (all_ != nullptr) all_->all_prev = c;
  all_ = c;
  flows_[t] = c;
  if (last_tuple_ == t) last_conn_ = c;
  return c;
}

void Engine::EraseFlow(Conn* c) {
  auto it = flows_.find(c->t);
  if (it == flows_.end() || it->second != c) return;
  flows_.erase(it);
  ++flow_erasures_;
  if (last_conn_ == c) last_conn_ = nullptr;
}

void Engine::Free(Conn* c) {
  if (c->tx_blocked) std::erase(tx_blocked_, c);  // rare: a flow freed while the port was full
  EraseFlow(c);
  wheel_.Cancel(c);
  if (c->all_prev != nullptr) c->all_prev->all_next = c->all_next; else all_ = c->all_next;
  if (c->all_next != nullptr) c->all_next->all_prev = c->all_prev;
  // Unread or unacknowledged bytes die with the connection: empty the rings to pool them.
  c->sndbuf.Consume(c->sndbuf.size());
  c->rcvbuf.Consume(c->rcvbuf.size());
  ReleaseBuffers(c);
  c->~Conn();
  conn_mem_.deallocate(c, sizeof(Conn), alignof(Conn));
  --live_conns_;
}

void Engine::MaybeFree(Conn* c) {
  if (c->state == TcpState::kClosed && !c->attached && c->listener == nullptr) Free(c);
}

void Engine::Abandon(Conn* c, int err) {
  if (err != 0 && c->err == 0) {
    c->err = err;
    Count(TcpCounter::kConnsAborted);
  }
  c->state = TcpState::kClosed;
  c->rto_at = c->delack_at = c->persist_at = c->linger_at = INT64_MAX;
  wheel_.Cancel(c);
  EraseFlow(c);
  if (c->listener != nullptr) {  // never accepted: the listener forgets it
    ListenState* l = c->listener;
    if (c->in_accept_queue) {
      Conn** p = &l->ready_head;
      Conn* prev = nullptr;
      while (*p != c) {
        prev = *p;
        p = &(*p)->accept_next;
      }
      *p = c->accept_next;
      if (l->ready_tail == c) l->ready_tail = prev;
      c->in_accept_queue = false;
    }
    --l->pending;
    c->listener = nullptr;
  }
  c->rd.Notify();
  c->wr.Notify();
  MaybeFree(c);
}

void Engine::Advance(std::int64_t now_ns) {
  SetNow(now_ns);
  wheel_.Advance(now_ns, [this](TimerNode* n) { OnTimer(static_cast<Conn*>(n)); });
  if (!tx_blocked_.empty()) RetryBlockedTx();
}

void Engine::BlockTx(Conn* c) {
  if (c->tx_blocked) return;
  c->tx_blocked = true;
  tx_blocked_.push_back(c);
}

void Engine::RetryBlockedTx() {
  tx_retrying_.swap(tx_blocked_);
  for (Conn* c : tx_retrying_) c->tx_blocked = false;
  std::size_t i = 0;
  for (; i < tx_retrying_.size(); ++i) {
    Conn* c = tx_retrying_[i];
    Output(c);
    ArmTimer(c);
    if (c->tx_blocked) break;  // still full: the rest wait for the next pass, in order
  }
  for (++i; i < tx_retrying_.size(); ++i) BlockTx(tx_retrying_[i]);
  tx_retrying_.clear();
}

std::int64_t Engine::NextTimerNs() const {
  return wheel_.NextDeadlineNs();
}

void Engine::ArmTimer(Conn* c) {
  const std::int64_t at = std::min({c->rto_at, c->delack_at, c->persist_at, c->linger_at});
  if (at == INT64_MAX) {
    wheel_.Disarm(c);
  } else if (!c->armed() || c->deadline_ns != at) {
    wheel_.Rearm(c, at);
  }
}

// --- listeners ------------------------------------------------------------------------------

Status<void> Engine::Listen(Endpoint local, int backlog, AcceptNotify* notify) {
  if (listens_.contains(local.port)) {
    return std::unexpected(AddressInUseError(fmt::format("Listen {}", local.ToString())));
  }
  auto l = std::make_unique<ListenState>();
  l->local = local;
  l->backlog = std::max(1, backlog);
  l->notify = notify;
  listens_[local.port] = std::move(l);
  return {};
}

void Engine::Unlisten(std::uint16_t port) {
  auto it = listens_.find(port);
  if (it == listens_.end()) return;
  ListenState* l = it->second.get();
  for (Conn* c = all_; c != nullptr;) {
    Conn* next = c->all_next;
    if (c->listener == l) {
      if (c->state != TcpState::kClosed) SendRst(c);
      Abandon(c, ECONNRESET);
    }
    c = next;
  }
  listens_.erase(it);
}

Conn* Engine::Accept(std::uint16_t port) {
  auto it = listens_.find(port);
  if (it == listens_.end()) return nullptr;
  ListenState* l = it->second.get();
  Conn* c = l->ready_head;
  if (c == nullptr) return nullptr;
  l->ready_head = c->accept_next;
  if (l->ready_head == nullptr) l->ready_tail = nullptr;
  c->accept_next = nullptr;
  c->in_accept_queue = false;
  c->listener = nullptr;
  c->attached = true;
  --l->pending;
  return c;
}

// --- active open ----------------------------------------------------------------------------

Status<Conn*> Engine::Connect(Endpoint remote) {
  if (remote.port == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("Connect to {}: port 0; give the port to connect to", remote.ToString()));
  }
  Now();
  for (std::uint32_t i = 0; i < kEphemeralCount; ++i) {
    const auto port = static_cast<std::uint16_t>(kEphemeralFirst + (next_port_++ % kEphemeralCount));
    FourTuple t{opt_.local_addr, port, remote.addr, remote.port};
    if (opt_.steer(t, opt_.num_cores) != opt_.core) continue;
    if (flows_.contains(t) || listens_.contains(port)) continue;
    Conn* c = NewConn(t);
    c->attached = true;
    c->iss = NewIss(t);
    c->snd_una = c->iss;
    c->snd_nxt = c->iss;
    c->snd_max = c->iss;
    c->recover = c->iss;
    c->snd_buf_seq = c->iss + 1;
    c->state = TcpState::kSynSent;
    SendSyn(c);
    ArmTimer(c);
    return c;
  }
  return MakeError(ErrorCode::kResourceExhausted,
                   fmt::format("Connect to {}: no free local port steers to core {}; close "
                               "connections or wait for TIME_WAIT ones to end",
                               remote.ToString(), opt_.core));
}

namespace {
Error ConnError(int err, const FourTuple& t, std::string_view op) {
  const std::string what = fmt::format("{} {}:{} -> {}:{}", op, t.local_addr.ToString(),
                                       t.local_port, t.remote_addr.ToString(), t.remote_port);
  switch (err) {
    case ECONNREFUSED: return RefusedError(what);
    case ETIMEDOUT: return TimedOutError(what + " (the peer stopped acknowledging)");
    default: return ResetError(what, ECONNRESET);
  }
}
}  // namespace

Status<void> Engine::ConnectResult(Conn* c) const {
  if (c->err != 0) return std::unexpected(ConnError(c->err, c->t, "Connect"));
  switch (c->state) {
    case TcpState::kSynSent:
    case TcpState::kSynReceived: return MakeError(ErrorCode::kWouldBlock, "handshaking");
    case TcpState::kClosed: return std::unexpected(ConnError(ECONNRESET, c->t, "Connect"));
    default: return {};
  }
}

// --- connection operations -----------------------------------------------------------------

bool Engine::RecvReady(const Conn* c) const {  // Recv's cases below, but kWouldBlock's
  return c->rcvbuf.size() > 0 || c->fin_in || c->err != 0 || c->state == TcpState::kClosed;
}

Status<std::size_t> Engine::Recv(Conn* c, std::span<std::byte> buf) {
  const std::size_t n = std::min(buf.size(), c->rcvbuf.size());
  if (n > 0) {
    c->rcvbuf.ReadAt(0, buf.data(), n);
    c->rcvbuf.Consume(n);
    // Drained after the peer's FIN with nothing more to come: the storage can go.
    if (c->state == TcpState::kTimeWait && c->rcvbuf.size() == 0) ReleaseBuffers(c);
    // A window update of its own when the right edge moved by enough (RFC 9293 3.8.6.2.2)
    // and the peer is short of window: what it may still send is under half the buffer (as
    // Linux's tcp_cleanup_rbuf). With more open, the peer is not held up, and the next segment
    // we send (the response of a request/response exchange, or the ACK of more data) carries
    // the new edge; an update per MSS read would be one extra frame every ~23 64-byte RPCs.
    // Not once the peer's FIN is in: nothing more will come (as Linux, which stops them at
    // RCV_SHUTDOWN), and a peer that has since freed the connection would only answer with a
    // reset.
    const std::uint32_t right = c->rcv_nxt + c->rcv_space();
    const std::uint32_t step = std::min<std::uint32_t>(static_cast<std::uint32_t>(c->rcv_limit / 2), c->mss);
    const std::uint32_t peer_window = SeqGt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
    if (!c->fin_in && c->state != TcpState::kClosed && c->state != TcpState::kSynSent &&
        peer_window < c->rcv_limit / 2 && SeqGeq(right, c->rcv_adv + step)) {
      Now();  // only here: a read that sends nothing needs no clock
      SendAck(c);
      ArmTimer(c);
    }
    return n;
  }
  if (c->fin_in) return 0;
  if (c->err != 0) return std::unexpected(ConnError(c->err, c->t, "Read"));
  if (c->state == TcpState::kClosed) return std::unexpected(ConnError(ECONNRESET, c->t, "Read"));
  return MakeError(ErrorCode::kWouldBlock, "no data yet");  // short strings: no allocation
}

Status<std::size_t> Engine::Send(Conn* c, std::span<const std::byte> buf) {
  if (c->err != 0) return std::unexpected(ConnError(c->err, c->t, "Write"));
  if (c->fin_queued) {
    return std::unexpected(ClosedError("Write after ShutdownWrite: the stream is already ended"));
  }
  switch (c->state) {
    case TcpState::kSynSent:
    case TcpState::kSynReceived:
    case TcpState::kEstablished:
    case TcpState::kCloseWait: break;
    default: return std::unexpected(ResetError("Write: the connection is closed", EPIPE));
  }
  const std::size_t n = std::min(buf.size(), c->sndbuf.space());
  if (n == 0) return MakeError(ErrorCode::kWouldBlock, "buffer full");
  Now();
  EnsureSndBuf(c);
  c->sndbuf.Append(buf.data(), n);
  Output(c);
  ArmTimer(c);
  return n;
}

Status<void> Engine::Shutdown(Conn* c) {
  if (c->fin_queued) return {};
  if (c->err != 0) return std::unexpected(ConnError(c->err, c->t, "ShutdownWrite"));
  Now();
  switch (c->state) {
    case TcpState::kSynSent:
    case TcpState::kSynReceived: c->fin_queued = true; return {};  // FIN once established
    case TcpState::kEstablished: c->state = TcpState::kFinWait1; break;
    case TcpState::kCloseWait: c->state = TcpState::kLastAck; break;
    default: return {};
  }
  c->fin_queued = true;
  Output(c);
  ArmTimer(c);
  return {};
}

void Engine::Close(Conn* c) {
  Now();
  c->attached = false;
  if (c->state == TcpState::kClosed) {
    MaybeFree(c);
    return;
  }
  if (c->rcvbuf.size() > 0 || c->state == TcpState::kSynSent) {
    // Unread data is lost: tell the peer with RST (RFC 9293 3.10.4, RFC 2525 2.17).
    if (c->state != TcpState::kSynSent) SendRst(c);
    Abandon(c, ECONNRESET);
    return;
  }
  if (!c->fin_queued) {
    c->fin_queued = true;
    if (c->state == TcpState::kEstablished) c->state = TcpState::kFinWait1;
    else if (c->state == TcpState::kCloseWait) c->state = TcpState::kLastAck;
  }
  if (c->state == TcpState::kFinWait2) c->linger_at = now_ + opt_.fin_wait2_timeout_ns;
  Output(c);
  ArmTimer(c);
}

void Engine::Abort(Conn* c) {
  Now();
  if (c->state != TcpState::kClosed && c->state != TcpState::kSynSent &&
      c->state != TcpState::kTimeWait) {
    SendRst(c);
  }
  if (c->state != TcpState::kClosed) Abandon(c, ECONNRESET);
}

IoWaiter& Engine::read_waiter(Conn* c) { return c->rd; }
IoWaiter& Engine::write_waiter(Conn* c) { return c->wr; }
FourTuple Engine::tuple(const Conn* c) const { return c->t; }

ConnInfo Engine::Info(const Conn* c) const {
  ConnInfo i{};
  i.state = c->state;
  i.snd_una = c->snd_una;
  i.snd_nxt = c->snd_nxt;
  i.snd_wnd = c->snd_wnd;
  i.rcv_nxt = c->rcv_nxt;
  i.rcv_wnd = c->rcv_space();
  i.cwnd = c->cwnd;
  i.ssthresh = c->ssthresh;
  i.recover = c->recover;
  i.in_recovery = c->in_recovery;
  i.mss = c->mss;
  i.snd_wscale = c->snd_wscale;
  i.rcv_wscale = c->rcv_wscale;
  i.srtt_ns = c->rtt_samples > 0 ? c->srtt : 0;
  i.rttvar_ns = c->rttvar;
  i.rto_ns = c->rto;
  i.rtt_samples = c->rtt_samples;
  i.retransmits = c->retransmits;
  i.send_queued = c->sndbuf.size();
  i.recv_ready = c->rcvbuf.size();
  return i;
}

// --- timers ---------------------------------------------------------------------------------

void Engine::OnTimer(Conn* c) {
  const std::int64_t now = now_;
  if (c->linger_at <= now) {
    c->linger_at = INT64_MAX;
    if (c->state == TcpState::kTimeWait || c->state == TcpState::kFinWait2) {
      Abandon(c, 0);
      return;
    }
  }
  if (c->rto_at <= now) {
    c->rto_at = INT64_MAX;
    Count(TcpCounter::kRtoTimeouts);
    const bool syn = c->state == TcpState::kSynSent || c->state == TcpState::kSynReceived;
    if (!syn && c->snd_wnd == 0 && c->attached) {
      // The window is shut with data outstanding (it closed behind data in flight, or a stale
      // ACK shut it): nothing may be sent, so the timeout resends the head as a window probe
      // and does not count towards giving up, as long as the application holds the
      // connection (as Linux does).
      c->rto = std::min(c->rto * 2, opt_.rto_max_ns);
      c->timing = false;
      Retransmit(c);
      Count(TcpCounter::kZeroWindowProbes);
      c->rto_at = now + c->rto;
    } else if (++c->retries > (syn ? opt_.max_syn_retransmits : opt_.max_retransmits)) {
      if (!syn) SendRst(c);
      Abandon(c, ETIMEDOUT);
      return;
    } else {
      c->rto = std::min(c->rto * 2, opt_.rto_max_ns);  // RFC 6298 5.5
      c->timing = false;                               // Karn
      if (syn) {
        SendSyn(c);
      } else {
        // RFC 5681 3.1 (5): one segment, half the flight as the new threshold.
        const std::uint32_t flight = c->snd_max - c->snd_una;
        c->ssthresh = std::max<std::uint32_t>(flight / 2, 2u * c->mss);
        c->cwnd = c->mss;
        c->in_recovery = false;
        c->dupacks = 0;
        c->recover = c->snd_max;  // RFC 6582 section 4
        c->snd_nxt = c->snd_una;  // go back N
        Output(c);
      }
      c->rto_at = now + c->rto;
    }
  }
  if (c->persist_at <= now) {
    c->persist_at = INT64_MAX;
    const std::uint32_t data_end = c->snd_buf_seq + static_cast<std::uint32_t>(c->sndbuf.size());
    if (c->snd_wnd == 0 && SeqLt(c->snd_una, data_end)) {
      // RFC 9293 3.8.6.1: probe with one byte; back off exponentially while the window stays shut.
      // The byte counts as sent (SND.MAX: an ACK of it is acceptable) but SND.NXT stays: if
      // the window opens without it having been taken, it goes first with the data that
      // follows, instead of data starting past a hole (duplicate ACKs, a false fast retransmit).
      SendSegment(c, c->snd_una, flags::kAck, c->snd_una - c->snd_buf_seq, 1);
      if (SeqLt(c->snd_max, c->snd_una + 1)) c->snd_max = c->snd_una + 1;
      Count(TcpCounter::kZeroWindowProbes);
      c->persist_backoff = std::min(std::max(c->persist_backoff * 2, c->rto), opt_.rto_max_ns);
      c->persist_at = now + c->persist_backoff;
    }
  }
  if (c->delack_at <= now) {
    c->delack_at = INT64_MAX;
    if (c->state != TcpState::kClosed) {
      Count(TcpCounter::kDelayedAcks);
      SendAck(c);
    }
  }
  ArmTimer(c);
}

}  // namespace junction::net::tcp
