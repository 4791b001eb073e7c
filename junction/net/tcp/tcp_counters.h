// tcp_counters.h — one engine's (so one core's) TCP counters: only increasing, by reason.
//
// Written only by the owning core (relaxed load + store, no read-modify-write), readable by
// any thread at any time (relaxed loads; a snapshot is a consistent-enough sum).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace junction::net::tcp {

enum class TcpCounter : int {
  kSegmentsIn,
  kSegmentsOut,
  kRetransmits,          // every segment sent again (timeout, fast or partial-ack)
  kFastRetransmits,      // of which: three duplicate ACKs (RFC 5681 3.2)
  kPartialAckRetransmits,// of which: NewReno partial ACKs (RFC 6582 3.2 step 3)
  kRtoTimeouts,          // retransmission timer expiries (RFC 6298 5.4)
  kZeroWindowProbes,
  kDelayedAcks,          // ACKs sent by the delayed-ACK timer
  kResetsIn,             // RSTs that reset a connection
  kResetsOut,            // RSTs sent
  kChallengeAcks,        // RFC 5961 challenge ACKs sent
  kConnsOpened,          // reached ESTABLISHED
  kConnsAborted,         // reset, refused or timed out
  kDropChecksum,         // bad TCP checksum
  kDropMalformed,        // too short, lying data offset, bad option length
  kDropOutOfWindow,      // failed the RFC 9293 3.10.7.4 acceptability test
  kDropBacklog,          // SYN beyond a listener's backlog
  kDropNoConn,           // no connection and no listener (answered with RST)
  kDropBadAck,           // unacceptable ACK (RFC 5961 section 5)
  kDropRateLimited,      // challenge ACK not sent: rate limit (RFC 5961 section 7)
  kTxNoBuffer,           // TcpTx::Alloc had no buffer for a SYN or RST: not sent
  kTxDeferred,           // TcpTx::Alloc refused a data or ACK segment: not sent yet, retried
                         // on the next pass (the port's TX side was full); nothing is lost
  kNumCounters,
};

std::string_view TcpCounterName(TcpCounter c);

struct TcpCounterSnapshot {
  std::array<std::uint64_t, static_cast<int>(TcpCounter::kNumCounters)> v{};
  std::uint64_t operator[](TcpCounter c) const { return v[static_cast<int>(c)]; }
  TcpCounterSnapshot& operator+=(const TcpCounterSnapshot& o) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] += o.v[i];
    return *this;
  }
};

class alignas(64) TcpCounters {
 public:
  void Add(TcpCounter c, std::uint64_t n = 1) {
    auto& x = v_[static_cast<int>(c)];
    x.store(x.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t Get(TcpCounter c) const { return v_[static_cast<int>(c)].load(std::memory_order_relaxed); }
  TcpCounterSnapshot Snapshot() const {
    TcpCounterSnapshot s;
    for (std::size_t i = 0; i < s.v.size(); ++i) s.v[i] = v_[i].load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::atomic<std::uint64_t> v_[static_cast<int>(TcpCounter::kNumCounters)] = {};
};

}  // namespace junction::net::tcp
