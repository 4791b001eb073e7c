// conn.h — the transmission control block of one connection (RFC 9293 3.3.1); engine-internal.
#pragma once

#include <cstdint>

#include "junction/net/io_waiter.h"
#include "junction/net/tcp/byte_ring.h"
#include "junction/net/tcp/engine.h"
#include "junction/net/tcp/timer_wheel.h"

namespace junction::net::tcp {

// Out-of-order data held in the receive ring beyond RCV.NXT: at most this many holes' worth.
inline constexpr int kMaxOooRanges = 16;

struct Conn : TimerNode {
  // The receive ring has kRcvSlack bytes beyond what is ever advertised: windows are rounded
  // up to the scale factor so that the right edge never moves left (RFC 9293 3.8.6.2.2),
  // and what the peer sends up to that edge must fit.
  static constexpr std::size_t kRcvSlack = std::size_t{1} << 14;
  Conn(const FourTuple& tuple, std::size_t snd_bytes, std::size_t rcv_bytes)
      : t(tuple), sndbuf(snd_bytes), rcvbuf(rcv_bytes + kRcvSlack), rcv_limit(rcv_bytes) {}

  // Bytes of window we may still offer: the advertised buffer less what is unread.
  std::uint32_t rcv_space() const {
    return rcvbuf.size() < rcv_limit ? static_cast<std::uint32_t>(rcv_limit - rcvbuf.size()) : 0;
  }

  FourTuple t;
  TcpState state = TcpState::kClosed;
  bool attached = false;        // the application holds it (Accept/Connect until Close)
  ListenState* listener = nullptr;   // passive and not yet accepted
  Conn* accept_next = nullptr;  // in the listener's ready queue
  bool in_accept_queue = false;
  int err = 0;                  // errno once aborted: ECONNREFUSED, ECONNRESET, ETIMEDOUT

  // Send side. sndbuf holds the bytes from seq snd_buf_seq (SND.UNA, or one past the SYN).
  std::uint32_t iss = 0, snd_una = 0, snd_nxt = 0, snd_max = 0;
  std::uint32_t snd_wnd = 0, snd_wl1 = 0, snd_wl2 = 0, max_snd_wnd = 0;
  std::uint32_t snd_buf_seq = 0;
  ByteRing sndbuf;
  bool fin_queued = false;  // the application shut down writing; FIN follows the data
  std::uint8_t snd_wscale = 0, rcv_wscale = 0;
  std::uint16_t mss = 536;  // what we send per segment

  // Receive side. rcvbuf's size() bytes are in order and unread; out-of-order bytes lie
  // beyond, recorded in ooo[] as [start, end) sequence ranges, sorted and disjoint.
  std::uint32_t irs = 0, rcv_nxt = 0, rcv_adv = 0;  // rcv_adv: right edge last advertised
  std::uint32_t rcv_wup = 0;  // RCV.NXT when we last sent an ACK
  ByteRing rcvbuf;
  std::size_t rcv_limit;  // the buffer we advertise (rcvbuf's capacity less the slack)
  struct Range {
    std::uint32_t start, end;
  } ooo[kMaxOooRanges];
  int n_ooo = 0;
  bool fin_in = false;        // the peer's FIN is in order: EOF after the buffered bytes
  bool ooo_fin = false;       // a FIN arrived beyond a hole
  std::uint32_t ooo_fin_seq = 0;

  // Congestion control (RFC 5681, RFC 6582).
  std::uint32_t cwnd = 0, ssthresh = 0xFFFFFFFF, recover = 0;
  std::uint32_t ca_acked = 0;  // bytes acknowledged towards the next congestion-avoidance step
  int dupacks = 0;
  bool in_recovery = false;

  // RTT estimation (RFC 6298) with Karn's rule: one timed segment at a time.
  std::int64_t srtt = 0, rttvar = 0, rto = 0;
  bool timing = false;
  std::uint32_t rtt_seq = 0;  // the sample completes when SND.UNA passes it
  std::int64_t rtt_start = 0;
  std::uint64_t rtt_samples = 0;
  int retries = 0;            // consecutive timeouts
  std::uint64_t retransmits = 0;

  // Timers (absolute ns, INT64_MAX when off); the wheel node is armed at their minimum.
  std::int64_t rto_at = INT64_MAX, delack_at = INT64_MAX, persist_at = INT64_MAX;
  std::int64_t linger_at = INT64_MAX;  // TIME_WAIT end, or the FIN_WAIT_2 give-up
  std::int64_t persist_backoff = 0;
  std::uint32_t unacked_segs = 0;  // full segments received since our last ACK
  bool ack_now = false;
  bool tx_blocked = false;  // in the engine's tx_blocked_ list: TcpTx::Alloc refused it

  IoWaiter rd, wr;
  Conn* all_prev = nullptr;  // every live connection of the engine
  Conn* all_next = nullptr;
};

struct ListenState {
  Endpoint local;
  int backlog = 0;
  int pending = 0;  // SYN_RCVD + ready, not yet accepted
  AcceptNotify* notify = nullptr;
  Conn* ready_head = nullptr;
  Conn* ready_tail = nullptr;
};

}  // namespace junction::net::tcp
