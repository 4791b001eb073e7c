// counters.cc — per-core network counters (see counters.h).
#include "junction/net/counters.h"

#include "junction/sched/sched.h"

namespace junction::net {

NetCounters& NetCounters::operator+=(const NetCounters& o) {
  conns_accepted += o.conns_accepted;
  conns_connected += o.conns_connected;
  bytes_in += o.bytes_in;
  bytes_out += o.bytes_out;
  datagrams_in += o.datagrams_in;
  datagrams_out += o.datagrams_out;
  timeouts += o.timeouts;
  errors += o.errors;
  rx_packets += o.rx_packets;
  rx_bytes += o.rx_bytes;
  tx_packets += o.tx_packets;
  tx_bytes += o.tx_bytes;
  drop_bad_checksum += o.drop_bad_checksum;
  drop_malformed += o.drop_malformed;
  drop_unknown_proto += o.drop_unknown_proto;
  drop_fragment += o.drop_fragment;
  drop_not_for_us += o.drop_not_for_us;
  drop_no_socket += o.drop_no_socket;
  drop_no_buffer += o.drop_no_buffer;
  drop_arp_unresolved += o.drop_arp_unresolved;
  drop_fault += o.drop_fault;
  arp_in += o.arp_in;
  icmp_echo_replies += o.icmp_echo_replies;
  tcp_retransmits += o.tcp_retransmits;
  tcp_resets += o.tcp_resets;
  tcp_drop_out_of_window += o.tcp_drop_out_of_window;
  tcp_drop_backlog += o.tcp_drop_backlog;
  tcp_challenge_acks += o.tcp_challenge_acks;
  return *this;
}

NetCounterSet::NetCounterSet(int num_cores)
    : num_cores_(num_cores < 0 ? 0 : num_cores), slots_(new Slot[num_cores_ + 1]) {}

void NetCounterSet::Add(Counter c, std::uint64_t n) {
  const int core = sched::CurrentCore();
  const int i = static_cast<int>(c);
  if (core >= 0 && core < num_cores_) {
    std::atomic<std::uint64_t>& v = slots_[core].v[i];
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  } else {
    slots_[num_cores_].v[i].fetch_add(n, std::memory_order_relaxed);
  }
}

NetCounters NetCounterSet::Read(int core) const {
  const Slot& s = slots_[core < 0 || core >= num_cores_ ? num_cores_ : core];
  auto get = [&](Counter c) { return s.v[static_cast<int>(c)].load(std::memory_order_relaxed); };
  NetCounters r;
  r.conns_accepted = get(Counter::kConnsAccepted);
  r.conns_connected = get(Counter::kConnsConnected);
  r.bytes_in = get(Counter::kBytesIn);
  r.bytes_out = get(Counter::kBytesOut);
  r.datagrams_in = get(Counter::kDatagramsIn);
  r.datagrams_out = get(Counter::kDatagramsOut);
  r.timeouts = get(Counter::kTimeouts);
  r.errors = get(Counter::kErrors);
  r.rx_packets = get(Counter::kRxPackets);
  r.rx_bytes = get(Counter::kRxBytes);
  r.tx_packets = get(Counter::kTxPackets);
  r.tx_bytes = get(Counter::kTxBytes);
  r.drop_bad_checksum = get(Counter::kDropBadChecksum);
  r.drop_malformed = get(Counter::kDropMalformed);
  r.drop_unknown_proto = get(Counter::kDropUnknownProto);
  r.drop_fragment = get(Counter::kDropFragment);
  r.drop_not_for_us = get(Counter::kDropNotForUs);
  r.drop_no_socket = get(Counter::kDropNoSocket);
  r.drop_no_buffer = get(Counter::kDropNoBuffer);
  r.drop_arp_unresolved = get(Counter::kDropArpUnresolved);
  r.drop_fault = get(Counter::kDropFault);
  r.arp_in = get(Counter::kArpIn);
  r.icmp_echo_replies = get(Counter::kIcmpEchoReplies);
  r.tcp_retransmits = get(Counter::kTcpRetransmits);
  r.tcp_resets = get(Counter::kTcpResets);
  r.tcp_drop_out_of_window = get(Counter::kTcpDropOutOfWindow);
  r.tcp_drop_backlog = get(Counter::kTcpDropBacklog);
  r.tcp_challenge_acks = get(Counter::kTcpChallengeAcks);
  return r;
}

NetCounters NetCounterSet::Total() const {
  NetCounters t;
  for (int c = -1; c < num_cores_; ++c) t += Read(c);
  return t;
}

}  // namespace junction::net
