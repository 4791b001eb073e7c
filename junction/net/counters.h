// counters.h — per-core network counters: one cache-aligned struct per core, only increasing.
//
// Each core's slot is written only by uthreads running on that core (cooperative scheduling:
// never two at once), with relaxed loads and stores — no read-modify-write on the data path.
// Calls from outside the runtime go to a shared overflow slot with fetch_add. Any thread may
// read a snapshot at any time; a snapshot of a live stack is a consistent-enough sum, not an
// atomic cut across fields.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace junction::net {

// A snapshot of one core's (or all cores') counters.
struct NetCounters {
  std::uint64_t conns_accepted = 0;   // TcpListener::Accept successes
  std::uint64_t conns_connected = 0;  // Stack::Connect successes
  std::uint64_t bytes_in = 0;         // TCP bytes read + UDP payload bytes received
  std::uint64_t bytes_out = 0;        // TCP bytes written + UDP payload bytes sent
  std::uint64_t datagrams_in = 0;
  std::uint64_t datagrams_out = 0;
  std::uint64_t timeouts = 0;  // operations that ended with kTimedOut
  std::uint64_t errors = 0;    // operations that failed otherwise (not counted: kClosed,
                               // which is this side's own closing)
  // Packet-level counters of the user-space (dpdk) stack; the kernel and loopback stacks
  // leave them at 0. Frames as the port saw them (after the fault injector on RX, before it
  // on TX), and every frame the stack dropped, by reason.
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t drop_bad_checksum = 0;   // IPv4 header, ICMP, UDP or TCP checksum wrong
  std::uint64_t drop_malformed = 0;      // truncated, lying lengths, bad version/header length
  std::uint64_t drop_unknown_proto = 0;  // ethertype or IP protocol the stack does not speak
  std::uint64_t drop_fragment = 0;       // IPv4 fragments (not reassembled)
  std::uint64_t drop_not_for_us = 0;     // another host's MAC or IPv4 address
  std::uint64_t drop_no_socket = 0;      // no UDP socket / TCP listener or flow for it
  std::uint64_t drop_no_buffer = 0;      // no mbuf, a full TX ring or socket queue
  std::uint64_t drop_arp_unresolved = 0; // queued for a next hop ARP never resolved
  std::uint64_t drop_fault = 0;          // dropped by the port's fault injector
  std::uint64_t arp_in = 0;              // ARP requests and replies received and used
  std::uint64_t icmp_echo_replies = 0;
  std::uint64_t tcp_retransmits = 0;
  std::uint64_t tcp_resets = 0;          // RST segments sent or accepted
  std::uint64_t tcp_drop_out_of_window = 0;  // failed the RFC 9293 acceptability test
  std::uint64_t tcp_drop_backlog = 0;        // SYNs beyond a listener's backlog
  std::uint64_t tcp_challenge_acks = 0;      // RFC 5961 challenge ACKs sent

  NetCounters& operator+=(const NetCounters& o);
};

enum class Counter : int {
  kConnsAccepted,
  kConnsConnected,
  kBytesIn,
  kBytesOut,
  kDatagramsIn,
  kDatagramsOut,
  kTimeouts,
  kErrors,
  kRxPackets,
  kRxBytes,
  kTxPackets,
  kTxBytes,
  kDropBadChecksum,
  kDropMalformed,
  kDropUnknownProto,
  kDropFragment,
  kDropNotForUs,
  kDropNoSocket,
  kDropNoBuffer,
  kDropArpUnresolved,
  kDropFault,
  kArpIn,
  kIcmpEchoReplies,
  kTcpRetransmits,
  kTcpResets,
  kTcpDropOutOfWindow,
  kTcpDropBacklog,
  kTcpChallengeAcks,
  kNumCounters,
};

// The counters of one stack: num_cores slots plus one for callers outside the runtime.
class NetCounterSet {
 public:
  explicit NetCounterSet(int num_cores);
  NetCounterSet(const NetCounterSet&) = delete;
  NetCounterSet& operator=(const NetCounterSet&) = delete;

  // Adds n to counter c of the calling uthread's core. Never blocks, never allocates.
  void Add(Counter c, std::uint64_t n = 1);

  int num_cores() const { return num_cores_; }
  // Core `core`'s counters (0 <= core < num_cores), or the outside-runtime slot for -1.
  NetCounters Read(int core) const;
  // The sum over every slot.
  NetCounters Total() const;

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> v[static_cast<int>(Counter::kNumCounters)] = {};
  };
  static_assert(sizeof(Slot) % 64 == 0, "whole cache lines per core, none shared");

  int num_cores_;
  std::unique_ptr<Slot[]> slots_;  // [0, num_cores) per core, [num_cores] outside
};

}  // namespace junction::net
