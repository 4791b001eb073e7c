// tcp_out.cc — building and sending segments: data as the windows allow, SYNs with options,
// ACKs, RSTs and retransmissions (RFC 9293 3.8, RFC 5681, RFC 6298).
#include <algorithm>

#include "junction/net/tcp/conn.h"
#include "junction/net/tcp/engine.h"
#include "junction/net/tcp/segment.h"

namespace junction::net::tcp {

namespace {
// The options of our SYN: MSS (RFC 9293 3.7.1), and window scale (RFC 7323 2.2) when `ws`.
std::size_t WriteSynOptions(std::byte* p, std::uint16_t mss, int ws) {
  p[0] = std::byte{2};
  p[1] = std::byte{4};
  Store16(p + 2, mss);
  if (ws < 0) return 4;
  p[4] = std::byte{1};  // NOP, to align
  p[5] = std::byte{3};
  p[6] = std::byte{3};
  p[7] = std::byte(static_cast<std::uint8_t>(ws));
  return 8;
}

std::uint32_t DataEnd(const Conn* c) {
  return c->snd_buf_seq + static_cast<std::uint32_t>(c->sndbuf.size());
}

void Finish(TcpTx* tx, TxFrame f, std::size_t len, Ipv4Addr src, Ipv4Addr dst) {
  std::uint32_t sum = PseudoHeaderSum(src, dst, len);
  std::uint16_t ck;
  if (tx->checksum_mode() == TxChecksum::kSoftware) {
    ck = static_cast<std::uint16_t>(~ChecksumFold(ChecksumAdd(sum, f.tcp.first(len))));
  } else {
    ck = ChecksumFold(sum);
  }
  // The sum was taken over little-endian words: store it back the same way.
  std::memcpy(f.tcp.data() + 16, &ck, 2);
  tx->Send(f, len);
}
}  // namespace

std::uint16_t Engine::AdvertisedWindow(Conn* c) {
  std::uint32_t space = c->rcv_space();
  const std::uint32_t cur = SeqGt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
  // Receiver SWS avoidance (RFC 9293 3.8.6.2.2): hold back increases smaller than
  // min(buffer / 2, MSS); and never move the right edge left.
  const std::uint32_t step = std::min<std::uint32_t>(static_cast<std::uint32_t>(c->rcv_limit / 2), c->mss);
  if (space < cur || space - cur < step) space = cur;
  // Round up to the scale: the edge then never lies left of one advertised before; the ring's
  // slack holds what the peer may send up to it.
  std::uint32_t w = (space + (1u << c->rcv_wscale) - 1) >> c->rcv_wscale;
  if (w > 65535) w = 65535;
  const std::uint32_t right = c->rcv_nxt + (w << c->rcv_wscale);
  if (SeqGt(right, c->rcv_adv)) c->rcv_adv = right;
  return static_cast<std::uint16_t>(w);
}

bool Engine::SendSegment(Conn* c, std::uint32_t seq, std::uint8_t fl, std::size_t data_off,
                         std::size_t data_len) {
  const std::size_t len = kHeaderBytes + data_len;
  auto f = tx_->Alloc(c->t.local_addr, c->t.remote_addr, len);
  if (!f) {
    Count(TcpCounter::kTxDeferred);
    BlockTx(c);
    return false;
  }
  const std::uint16_t wnd = AdvertisedWindow(c);
  WriteHeader(f->tcp.data(), c->t.local_port, c->t.remote_port, seq,
              (fl & flags::kAck) != 0 ? c->rcv_nxt : 0, fl, wnd, 0);
  if (data_len > 0) c->sndbuf.ReadAt(data_off, f->tcp.data() + kHeaderBytes, data_len);
  Finish(tx_, *f, len, c->t.local_addr, c->t.remote_addr);
  Count(TcpCounter::kSegmentsOut);
  if ((fl & flags::kAck) != 0) {
    c->rcv_wup = c->rcv_nxt;
    c->ack_now = false;
    c->unacked_segs = 0;
    c->delack_at = INT64_MAX;
  }
  return true;
}

void Engine::SendSyn(Conn* c) {
  const bool ack = c->state == TcpState::kSynReceived;
  // We offer window scaling on an active open, and answer it on a passive one only when the
  // peer offered it (RFC 7323 2.2); without it both shifts are 0.
  const int ws = (!ack || c->snd_wscale > 0 || c->rcv_wscale > 0) ? c->rcv_wscale : -1;
  std::byte opts[8];
  const std::size_t olen = WriteSynOptions(opts, mss_, ws);
  const std::size_t len = kHeaderBytes + olen;
  auto f = tx_->Alloc(c->t.local_addr, c->t.remote_addr, len);
  if (f) {
    std::memcpy(f->tcp.data() + kHeaderBytes, opts, olen);
    // The window of a SYN is never scaled (RFC 7323 2.2).
    const auto w = static_cast<std::uint16_t>(std::min<std::size_t>(c->rcv_space(), 65535));
    c->rcv_adv = c->rcv_nxt + w;
    c->rcv_wup = c->rcv_nxt;
    WriteHeader(f->tcp.data(), c->t.local_port, c->t.remote_port, c->iss, ack ? c->rcv_nxt : 0,
                static_cast<std::uint8_t>(flags::kSyn | (ack ? flags::kAck : 0)), w, olen);
    Finish(tx_, *f, len, c->t.local_addr, c->t.remote_addr);
    Count(TcpCounter::kSegmentsOut);
  } else {
    Count(TcpCounter::kTxNoBuffer);
  }
  if (SeqGt(c->snd_max, c->iss)) {
    Count(TcpCounter::kRetransmits);
    ++c->retransmits;
    c->timing = false;
  } else {
    c->timing = true;
    c->rtt_seq = c->iss + 1;
    c->rtt_start = now_;
  }
  c->snd_nxt = c->iss + 1;
  c->snd_max = c->iss + 1;
  if (c->rto_at == INT64_MAX) c->rto_at = now_ + c->rto;
}

namespace {
// The sequence number of a segment without data: the highest sent (as Linux's
// tcp_acceptable_seq). Not SND.NXT: after a timeout rewinds SND.NXT, an ACK carrying it could
// lie below the peer's RCV.NXT, be found unacceptable, and both sides would then drop each
// other's ACKs. SND.MAX lies inside the peer's window (everything was sent inside it, and a
// right edge never moves left) except for a zero-window probe byte, which is left out.
std::uint32_t AckSeq(const Conn* c) {
  if (c->snd_wnd == 0 && c->snd_max == c->snd_una + 1 && c->snd_nxt == c->snd_una) return c->snd_una;
  return c->snd_max;
}
}  // namespace

void Engine::SendAck(Conn* c) { SendSegment(c, AckSeq(c), flags::kAck, 0, 0); }

void Engine::SendRst(Conn* c) {
  SendSegment(c, AckSeq(c), flags::kRst | flags::kAck, 0, 0);
  Count(TcpCounter::kResetsOut);
}

void Engine::SendBareRst(const FourTuple& t, std::uint32_t seq, std::uint32_t ack, bool with_ack) {
  auto f = tx_->Alloc(t.local_addr, t.remote_addr, kHeaderBytes);
  if (!f) {
    Count(TcpCounter::kTxNoBuffer);
    return;
  }
  WriteHeader(f->tcp.data(), t.local_port, t.remote_port, seq, with_ack ? ack : 0,
              static_cast<std::uint8_t>(flags::kRst | (with_ack ? flags::kAck : 0)), 0, 0);
  Finish(tx_, *f, kHeaderBytes, t.local_addr, t.remote_addr);
  Count(TcpCounter::kSegmentsOut);
  Count(TcpCounter::kResetsOut);
}

void Engine::Output(Conn* c) {
  switch (c->state) {
    case TcpState::kEstablished:
    case TcpState::kCloseWait:
    case TcpState::kFinWait1:
    case TcpState::kClosing:
    case TcpState::kLastAck: break;
    case TcpState::kSynSent:
    case TcpState::kSynReceived:
    case TcpState::kClosed: return;
    default:
      if (c->ack_now) SendAck(c);
      return;
  }
  const std::uint32_t data_end = DataEnd(c);
  for (;;) {
    const std::uint32_t flight = c->snd_nxt - c->snd_una;
    const std::uint32_t wnd = std::min(c->snd_wnd, c->cwnd);
    std::uint32_t seq = c->snd_nxt;
    std::size_t n = 0;
    bool fin = false;
    if (SeqLt(seq, data_end)) {
      const std::uint32_t usable = wnd > flight ? wnd - flight : 0;
      n = std::min<std::size_t>({data_end - seq, usable, c->mss});
      if (n == 0) break;
      fin = c->fin_queued && seq + n == data_end;
    } else if (c->fin_queued && seq == data_end) {
      fin = true;  // a FIN takes no window space
    } else {
      break;
    }
    std::uint8_t fl = flags::kAck;
    if (fin) fl |= flags::kFin;
    if (n > 0 && seq + n == data_end) fl |= flags::kPsh;
    const bool resend = SeqLt(seq, c->snd_max);
    if (!SendSegment(c, seq, fl, seq - c->snd_buf_seq, n)) break;
    if (resend) {
      Count(TcpCounter::kRetransmits);
      ++c->retransmits;
      c->timing = false;  // Karn: no sample while retransmitted data is outstanding
    }
    c->snd_nxt = seq + static_cast<std::uint32_t>(n) + (fin ? 1 : 0);
    if (SeqGt(c->snd_nxt, c->snd_max)) {
      if (!c->timing && !resend) {
        c->timing = true;
        c->rtt_seq = c->snd_nxt;
        c->rtt_start = now_;
      }
      c->snd_max = c->snd_nxt;
    }
    if (c->rto_at == INT64_MAX) c->rto_at = now_ + c->rto;
  }
  // Zero window with data waiting and nothing outstanding: the persist timer takes over from
  // the retransmission timer (RFC 9293 3.8.6.1).
  if (c->snd_wnd == 0 && SeqLt(c->snd_una, data_end) && SeqLeq(c->snd_max, c->snd_una + 1)) {
    c->rto_at = INT64_MAX;
    if (c->persist_at == INT64_MAX) {
      c->persist_backoff = std::max(c->persist_backoff, c->rto);
      c->persist_at = now_ + c->persist_backoff;
    }
  }
  if (c->ack_now) SendAck(c);
}

void Engine::Retransmit(Conn* c) {
  if (c->snd_una == c->iss) {
    SendSyn(c);
    return;
  }
  const std::uint32_t data_end = DataEnd(c);
  const std::uint32_t seq = c->snd_una;
  // Only what was sent before: never past SND.MAX (queued data beyond it is new data).
  const std::uint32_t limit = SeqLt(c->snd_max, data_end) ? c->snd_max : data_end;
  std::size_t n = SeqLt(seq, limit) ? std::min<std::size_t>(limit - seq, c->mss) : 0;
  const bool fin = c->fin_queued && seq + n == data_end && SeqGt(c->snd_max, data_end);
  if (n == 0 && !fin) return;
  std::uint8_t fl = flags::kAck;
  if (fin) fl |= flags::kFin;
  if (n > 0 && seq + n == data_end) fl |= flags::kPsh;
  if (SendSegment(c, seq, fl, seq - c->snd_buf_seq, n)) {
    Count(TcpCounter::kRetransmits);
    ++c->retransmits;
    c->timing = false;
  }
}

}  // namespace junction::net::tcp
