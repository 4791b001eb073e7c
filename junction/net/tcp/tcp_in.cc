// tcp_in.cc — segment arrival (RFC 9293 3.10.7) with the RFC 5961 checks, ACK processing with
// RTT sampling (RFC 6298), congestion control (RFC 5681) and NewReno (RFC 6582), reassembly.
#include <algorithm>

#include "junction/net/tcp/conn.h"
#include "junction/net/tcp/engine.h"
#include "junction/net/tcp/segment.h"

namespace junction::net::tcp {

namespace {
std::uint32_t InitialWindow(std::uint32_t mss) {  // RFC 5681 3.1
  return mss > 2190 ? 2 * mss : mss > 1095 ? 3 * mss : 4 * mss;
}

void Sample(Conn* c, std::int64_t r, const EngineOptions& o) {  // RFC 6298 2.2-2.4
  if (r < 0) r = 0;
  if (c->rtt_samples == 0) {
    c->srtt = r;
    c->rttvar = r / 2;
  } else {
    const std::int64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;
    c->rttvar = (3 * c->rttvar + d) / 4;
    c->srtt = (7 * c->srtt + r) / 8;
  }
  ++c->rtt_samples;
  c->rto = std::clamp(c->srtt + std::max<std::int64_t>(1'000'000, 4 * c->rttvar), o.rto_min_ns,
                      o.rto_max_ns);
}

void ApplySynOptions(Conn* c, const Segment& s, std::uint16_t our_mss) {
  c->mss = std::min<std::uint16_t>(s.mss != 0 ? s.mss : 536, our_mss);  // RFC 9293 3.7.1
  if (c->mss < 64) c->mss = 64;
  if (s.wscale >= 0) {
    c->snd_wscale = static_cast<std::uint8_t>(s.wscale);
  } else {
    c->snd_wscale = 0;
    c->rcv_wscale = 0;
  }
}
}  // namespace

void Engine::Input(const RxSegment& rx) {
  if (rx.now_ns != 0) {
    SetNow(rx.now_ns);  // the poll pass's clock: one TSC read per pass, not per segment
  } else {
    Now();
  }
  Count(TcpCounter::kSegmentsIn);
  if (rx.tcp.size() < kHeaderBytes) {
    Count(TcpCounter::kDropMalformed);
    return;
  }
  if (!rx.checksum_verified && !TcpChecksumOk(rx.src, rx.dst, rx.tcp)) {
    Count(TcpCounter::kDropChecksum);
    return;
  }
  Segment s;
  if (ParseSegment(rx.tcp, &s) != ParseError::kOk) {
    Count(TcpCounter::kDropMalformed);
    return;
  }
  const FourTuple t{rx.dst, s.dst_port, rx.src, s.src_port};
  Conn* c = last_conn_ != nullptr && last_tuple_ == t ? last_conn_ : nullptr;
  if (c == nullptr) {
    if (auto it = flows_.find(t); it != flows_.end()) {
      c = it->second;
      last_tuple_ = t;
      last_conn_ = c;
    }
  }
  if (c != nullptr) {
    const std::uint64_t erasures = flow_erasures_;
    if (c->state == TcpState::kSynSent) {
      InputSynSent(c, s);
    } else if (c->state == TcpState::kTimeWait && s.has(flags::kSyn) && !s.has(flags::kAck) &&
               !s.has(flags::kRst) && SeqGt(s.seq, c->rcv_nxt) && listens_.contains(t.local_port)) {
      // A new incarnation of the pair: a SYN above what the old one used may end TIME_WAIT
      // early (RFC 9293 3.6.1, RFC 1122 4.2.2.13).
      Abandon(c, 0);
      InputListen(listens_[t.local_port].get(), t, s);
      return;
    } else {
      InputSynchronized(c, s);
    }
    // c may be gone (freed, or out of flows_ and done with its timers): only when an entry
    // was erased does that need a lookup.
    if (flow_erasures_ == erasures || flows_.contains(t)) ArmTimer(c);
    return;
  }
  if (auto it = listens_.find(t.local_port);
      it != listens_.end() && (it->second->local.addr.is_any() || it->second->local.addr == t.local_addr)) {
    InputListen(it->second.get(), t, s);
    return;
  }
  Count(TcpCounter::kDropNoConn);
  ResetFor(t, s);
}

void Engine::ResetFor(const FourTuple& t, const Segment& s) {  // RFC 9293 3.10.7.1
  if (s.has(flags::kRst)) return;
  if (s.has(flags::kAck)) {
    SendBareRst(t, s.ack, 0, false);
  } else {
    SendBareRst(t, 0, s.seq + s.len(), true);
  }
}

void Engine::InputListen(ListenState* l, const FourTuple& t, const Segment& s) {  // 3.10.7.2
  if (s.has(flags::kRst)) return;
  if (s.has(flags::kAck)) {
    ResetFor(t, s);
    return;
  }
  if (!s.has(flags::kSyn)) return;
  if (l->pending >= l->backlog) {
    Count(TcpCounter::kDropBacklog);
    return;
  }
  Conn* c = NewConn(t);
  c->listener = l;
  ++l->pending;
  c->irs = s.seq;
  c->rcv_nxt = s.seq + 1;
  c->rcv_adv = c->rcv_nxt;
  ApplySynOptions(c, s, mss_);
  c->iss = NewIss(t);
  c->snd_una = c->snd_nxt = c->snd_max = c->iss;
  c->recover = c->iss;
  c->snd_buf_seq = c->iss + 1;
  c->snd_wnd = s.window;  // never scaled in a SYN
  c->snd_wl1 = s.seq;
  c->snd_wl2 = c->iss;
  c->max_snd_wnd = c->snd_wnd;
  c->state = TcpState::kSynReceived;
  // Data on a SYN is not kept; the peer sends it again once we acknowledge only the SYN.
  SendSyn(c);
  ArmTimer(c);
}

void Engine::InputSynSent(Conn* c, const Segment& s) {  // 3.10.7.3
  if (s.has(flags::kAck) && (SeqLeq(s.ack, c->iss) || SeqGt(s.ack, c->snd_max))) {
    Count(TcpCounter::kDropBadAck);
    if (!s.has(flags::kRst)) SendBareRst(c->t, s.ack, 0, false);
    return;
  }
  if (s.has(flags::kRst)) {
    if (s.has(flags::kAck)) {  // acceptable ACK (checked above): refused
      Count(TcpCounter::kResetsIn);
      Abandon(c, ECONNREFUSED);
    }
    return;
  }
  if (!s.has(flags::kSyn)) return;
  c->irs = s.seq;
  c->rcv_nxt = s.seq + 1;
  c->rcv_adv = c->rcv_nxt;
  ApplySynOptions(c, s, mss_);
  c->snd_wnd = s.window;
  c->snd_wl1 = s.seq;
  c->snd_wl2 = s.ack;
  c->max_snd_wnd = c->snd_wnd;
  if (s.has(flags::kAck)) {
    c->snd_una = s.ack;
    if (c->timing && SeqGeq(s.ack, c->rtt_seq)) Sample(c, now_ - c->rtt_start, opt_);
    c->timing = false;
    c->retries = 0;
    c->rto_at = INT64_MAX;
    c->cwnd = InitialWindow(c->mss);
    c->state = c->fin_queued ? TcpState::kFinWait1 : TcpState::kEstablished;
    Count(TcpCounter::kConnsOpened);
    c->ack_now = true;
    c->wr.Notify();
    Output(c);  // data queued during the handshake, or the ACK
    return;
  }
  // Simultaneous open (RFC 9293 figure 7): answer SYN,ACK with our ISS and wait for its ACK.
  c->state = TcpState::kSynReceived;
  c->rto_at = INT64_MAX;
  SendSyn(c);
}

void Engine::ChallengeAck(Conn* c) {  // RFC 5961 sections 3.2, 4.2, 5.2; rate per section 7
  if (now_ - challenge_window_start_ >= 1'000'000'000) {
    challenge_window_start_ = now_;
    challenge_acks_in_window_ = 0;
  }
  if (challenge_acks_in_window_ >= opt_.challenge_acks_per_s) {
    Count(TcpCounter::kDropRateLimited);
    return;
  }
  ++challenge_acks_in_window_;
  Count(TcpCounter::kChallengeAcks);
  SendAck(c);
}

void Engine::InputSynchronized(Conn* c, const Segment& s) {  // 3.10.7.4
  // First: the acceptability test of the sequence number (RFC 9293 3.10.7.4), against the
  // window we can hold, with Linux's two allowances: the right edge is inclusive (an ACK from a
  // peer that filled our window carries SEQ = RCV.NXT + RCV.WND), and the left edge is RCV.NXT
  // as of our last ACK (an ACK overtaken by data is taken quietly; answering it would look
  // like a duplicate ACK to the peer). Older segments, zero-window probes among them
  // (SEQ = RCV.NXT - 1), get an ACK.
  const std::uint32_t wnd = static_cast<std::uint32_t>(c->rcvbuf.space());
  const std::uint32_t len = s.len();
  const std::uint32_t left = SeqLt(c->rcv_wup, c->rcv_nxt) ? c->rcv_wup : c->rcv_nxt;
  const bool ok = (len == 0 ? SeqGeq(s.seq, left) : SeqGt(s.seq + len, left)) &&
                  SeqLeq(s.seq, c->rcv_nxt + wnd);
  if (!ok) {
    Count(TcpCounter::kDropOutOfWindow);
    if (!s.has(flags::kRst)) {
      SendAck(c);  // <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>
      if (c->state == TcpState::kTimeWait) c->linger_at = now_ + opt_.time_wait_ns;
    }
    return;
  }
  // Second: RST (RFC 5961 3.2): exactly at RCV.NXT resets; elsewhere in the window it is
  // answered with a challenge ACK.
  if (s.has(flags::kRst)) {
    if (s.seq != c->rcv_nxt || len != 0) {
      ChallengeAck(c);
      return;
    }
    Count(TcpCounter::kResetsIn);
    const bool quiet = c->state == TcpState::kTimeWait || c->state == TcpState::kClosing ||
                       c->state == TcpState::kLastAck;
    const bool refused = c->state == TcpState::kSynReceived && c->listener == nullptr;
    Abandon(c, quiet ? 0 : refused ? ECONNREFUSED : ECONNRESET);
    return;
  }
  // Fourth: SYN in a synchronized state: challenge ACK (RFC 5961 4.2).
  if (s.has(flags::kSyn)) {
    ChallengeAck(c);
    return;
  }
  // Fifth: the ACK field.
  if (!s.has(flags::kAck)) return;
  if (c->state == TcpState::kSynReceived) {
    if (!(SeqLt(c->snd_una, s.ack) && SeqLeq(s.ack, c->snd_max))) {
      Count(TcpCounter::kDropBadAck);
      SendBareRst(c->t, s.ack, 0, false);
      return;
    }
    c->snd_wnd = static_cast<std::uint32_t>(s.window) << c->snd_wscale;
    c->snd_wl1 = s.seq;
    c->snd_wl2 = s.ack;
    c->max_snd_wnd = std::max(c->max_snd_wnd, c->snd_wnd);
    c->cwnd = InitialWindow(c->mss);
    c->state = c->fin_queued ? TcpState::kFinWait1 : TcpState::kEstablished;
    Count(TcpCounter::kConnsOpened);
    if (c->listener != nullptr) {
      ListenState* l = c->listener;
      c->in_accept_queue = true;
      if (l->ready_tail != nullptr) l->ready_tail->accept_next = c; else l->ready_head = c;
      l->ready_tail = c;
      if (l->notify != nullptr) l->notify->Ready(opt_.core);
    }
    c->wr.Notify();
  }
  if (!ProcessAck(c, s)) return;
  // Seventh: the segment text, and eighth: FIN.
  switch (c->state) {
    case TcpState::kEstablished:
    case TcpState::kFinWait1:
    case TcpState::kFinWait2:
      ProcessData(c, s);  // trims to the window: a probe into a shut one only gets an ACK
      break;
    case TcpState::kTimeWait:
      if (s.has(flags::kFin)) {  // the peer did not get our last ACK
        c->ack_now = true;
        c->linger_at = now_ + opt_.time_wait_ns;
      }
      break;
    default:
      if (s.has(flags::kFin) || !s.payload.empty()) c->ack_now = true;  // duplicate FIN
      break;
  }
  if (c->state == TcpState::kClosed) return;
  Output(c);
  if (c->ack_now) SendAck(c);
}

bool Engine::ProcessAck(Conn* c, const Segment& s) {
  const std::uint32_t ack = s.ack;
  // RFC 5961 5.2: acceptable only in [SND.UNA - MAX.SND.WND, SND.NXT].
  if (SeqGt(ack, c->snd_max) || SeqLt(ack, c->snd_una - c->max_snd_wnd)) {
    Count(TcpCounter::kDropBadAck);
    ChallengeAck(c);
    return false;
  }
  const std::uint32_t wnd = static_cast<std::uint32_t>(s.window) << c->snd_wscale;
  if (SeqGt(ack, c->snd_una)) {
    const std::uint32_t acked = ack - c->snd_una;
    const std::uint32_t data_end = c->snd_buf_seq + static_cast<std::uint32_t>(c->sndbuf.size());
    const std::uint32_t data_acked_to = SeqLt(ack, data_end) ? ack : data_end;
    if (SeqGt(data_acked_to, c->snd_buf_seq)) {
      c->sndbuf.Consume(data_acked_to - c->snd_buf_seq);
      c->snd_buf_seq = data_acked_to;
      c->wr.Notify();
    }
    if (c->timing && SeqGeq(ack, c->rtt_seq)) {  // Karn: timing is off once anything was resent
      Sample(c, now_ - c->rtt_start, opt_);
      c->timing = false;
    }
    c->snd_una = ack;
    if (SeqLt(c->snd_nxt, ack)) c->snd_nxt = ack;
    c->retries = 0;
    const std::uint32_t flight = c->snd_max - c->snd_una;
    if (c->in_recovery) {
      if (SeqGeq(ack, c->recover)) {  // full ACK (RFC 6582 3.2 step 3)
        c->cwnd = std::min(c->ssthresh, std::max<std::uint32_t>(flight, c->mss) + c->mss);
        c->in_recovery = false;
        c->dupacks = 0;
      } else {  // partial ACK: resend the next hole at once, deflate the window
        Retransmit(c);
        Count(TcpCounter::kPartialAckRetransmits);
        c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
        if (acked >= c->mss) c->cwnd += c->mss;
        c->cwnd = std::max<std::uint32_t>(c->cwnd, c->mss);
      }
    } else {
      c->dupacks = 0;
      if (c->cwnd < c->ssthresh) {
        // Slow start with appropriate byte counting, L = 2 (RFC 3465): a delayed ACK covers
        // two segments.
        c->cwnd += std::min<std::uint32_t>(acked, 2u * c->mss);
      } else {
        // Congestion avoidance by bytes acknowledged: one MSS per window's worth (RFC 5681 3.1).
        c->ca_acked += acked;
        if (c->ca_acked >= c->cwnd) {
          c->ca_acked -= c->cwnd;
          c->cwnd += c->mss;
        }
      }
    }
    // RFC 6298 5.2-5.3: restart the timer while data is outstanding, stop it when none is.
    c->rto_at = c->snd_una == c->snd_max ? INT64_MAX : now_ + c->rto;
    const bool fin_acked = c->fin_queued && c->snd_una == data_end + 1;
    if (fin_acked) {
      switch (c->state) {
        case TcpState::kFinWait1:
          c->state = TcpState::kFinWait2;
          if (!c->attached) c->linger_at = now_ + opt_.fin_wait2_timeout_ns;
          break;
        case TcpState::kClosing: EnterTimeWait(c); break;
        case TcpState::kLastAck: Abandon(c, 0); return false;
        default: break;
      }
    }
  } else if (ack == c->snd_una && s.payload.empty() && !s.has(flags::kFin) && wnd == c->snd_wnd &&
             wnd != 0 && c->snd_max != c->snd_una) {
    // A duplicate ACK (RFC 5681 section 2).
    ++c->dupacks;
    if (c->in_recovery) {
      c->cwnd += c->mss;  // each further duplicate: one segment left the network
    } else if (c->dupacks == 3 && SeqGt(ack, c->recover)) {
      // Fast retransmit (RFC 5681 3.2) and NewReno recovery (RFC 6582 3.2 step 2); not when
      // the ACK does not cover `recover` (duplicates from an earlier episode).
      const std::uint32_t flight = c->snd_max - c->snd_una;
      c->ssthresh = std::max<std::uint32_t>(flight / 2, 2u * c->mss);
      c->recover = c->snd_max;
      c->in_recovery = true;
      Retransmit(c);
      Count(TcpCounter::kFastRetransmits);
      c->cwnd = c->ssthresh + 3u * c->mss;
      c->rto_at = now_ + c->rto;
    }
  }
  // The window (RFC 9293 3.10.7.4, fifth check): only from a newer segment.
  if (SeqLt(c->snd_wl1, s.seq) || (c->snd_wl1 == s.seq && SeqLeq(c->snd_wl2, ack))) {
    c->snd_wnd = wnd;
    c->snd_wl1 = s.seq;
    c->snd_wl2 = ack;
    c->max_snd_wnd = std::max(c->max_snd_wnd, wnd);
    if (wnd != 0 && c->persist_at != INT64_MAX) {
      c->persist_at = INT64_MAX;
      c->persist_backoff = 0;
      if (c->snd_una != c->snd_max && c->rto_at == INT64_MAX) c->rto_at = now_ + c->rto;
    }
  }
  return true;
}

void Engine::ProcessData(Conn* c, const Segment& s) {
  std::uint32_t seq = s.seq;
  std::span<const std::byte> data = s.payload;
  bool fin = s.has(flags::kFin);
  const std::uint32_t fin_seq = s.seq + static_cast<std::uint32_t>(s.payload.size());
  if (SeqLt(seq, c->rcv_nxt)) {  // trim what we already have
    const std::uint32_t skip = c->rcv_nxt - seq;
    data = skip >= data.size() ? data.subspan(data.size()) : data.subspan(skip);
    seq = c->rcv_nxt;
  }
  const std::uint32_t right = c->rcv_nxt + static_cast<std::uint32_t>(c->rcvbuf.space());
  if (SeqGt(seq + static_cast<std::uint32_t>(data.size()), right)) {  // trim to the window
    data = data.first(SeqGt(right, seq) ? right - seq : 0);
    fin = false;
  }
  if (!data.empty()) {
    const std::uint32_t n = static_cast<std::uint32_t>(data.size());
    EnsureRcvBuf(c);  // the first bytes in: the receive ring gets its storage now
    c->rcvbuf.WriteAt(c->rcvbuf.size() + (seq - c->rcv_nxt), data.data(), n);
    if (seq == c->rcv_nxt) {
      c->rcv_nxt += n;
      c->rcvbuf.Grow(n);
      bool filled = false;
      while (c->n_ooo > 0 && SeqLeq(c->ooo[0].start, c->rcv_nxt)) {
        if (SeqGt(c->ooo[0].end, c->rcv_nxt)) {
          c->rcvbuf.Grow(c->ooo[0].end - c->rcv_nxt);
          c->rcv_nxt = c->ooo[0].end;
        }
        std::move(c->ooo + 1, c->ooo + c->n_ooo, c->ooo);
        --c->n_ooo;
        filled = true;
      }
      // RFC 5681 4.2: ACK at once when a gap is filled, else every second full segment.
      c->unacked_segs += n >= c->mss ? 2 : 1;
      if (filled || c->unacked_segs >= 4) c->ack_now = true;
      c->rd.Notify();
    } else {
      // Out of order: remember [seq, seq + n) and send a duplicate ACK at once.
      Conn::Range r{seq, seq + n};
      int i = 0;
      while (i < c->n_ooo && SeqLt(c->ooo[i].end, r.start)) ++i;
      int j = i;
      while (j < c->n_ooo && SeqLeq(c->ooo[j].start, r.end)) {
        if (SeqLt(c->ooo[j].start, r.start)) r.start = c->ooo[j].start;
        if (SeqGt(c->ooo[j].end, r.end)) r.end = c->ooo[j].end;
        ++j;
      }
      const int removed = j - i;
      if (removed == 0 && c->n_ooo == kMaxOooRanges) {
        // No room to remember another hole: forget the data (the peer sends it again).
      } else {
        if (removed == 0) {  // open a slot at i
          std::move_backward(c->ooo + i, c->ooo + c->n_ooo, c->ooo + c->n_ooo + 1);
        } else {  // ranges i..j-1 become one
          std::move(c->ooo + j, c->ooo + c->n_ooo, c->ooo + i + 1);
        }
        c->n_ooo = c->n_ooo - removed + 1;
        c->ooo[i] = r;
      }
      c->ack_now = true;
    }
  } else if (!s.payload.empty()) {
    c->ack_now = true;  // a duplicate: the peer may have missed our ACK
  }
  if (fin && SeqGt(fin_seq, c->rcv_nxt)) {
    c->ooo_fin = true;
    c->ooo_fin_seq = fin_seq;
    c->ack_now = true;
  } else if (fin && fin_seq == c->rcv_nxt) {
    ProcessFin(c);
  }
  if (c->ooo_fin && c->ooo_fin_seq == c->rcv_nxt && !c->fin_in) ProcessFin(c);
  if (!c->ack_now && c->unacked_segs > 0 && c->delack_at == INT64_MAX) {
    c->delack_at = now_ + opt_.delayed_ack_ns;
  }
}

void Engine::ProcessFin(Conn* c) {
  if (c->fin_in) return;
  c->fin_in = true;
  c->ooo_fin = false;
  c->rcv_nxt += 1;
  c->ack_now = true;
  c->rd.Notify();
  switch (c->state) {
    case TcpState::kSynReceived:
    case TcpState::kEstablished: c->state = TcpState::kCloseWait; break;
    case TcpState::kFinWait1: c->state = TcpState::kClosing; break;  // simultaneous close
    case TcpState::kFinWait2: EnterTimeWait(c); break;
    default: break;
  }
}

void Engine::EnterTimeWait(Conn* c) {
  c->state = TcpState::kTimeWait;
  // Everything we sent is acknowledged and the peer sends nothing more: TIME_WAIT (2 MSL)
  // keeps no ring storage, only the block (the receive ring's once the application drained it).
  ReleaseBuffers(c);
  c->rto_at = c->persist_at = INT64_MAX;
  c->linger_at = now_ + opt_.time_wait_ns;
  c->rd.Notify();
  c->wr.Notify();
}

}  // namespace junction::net::tcp
