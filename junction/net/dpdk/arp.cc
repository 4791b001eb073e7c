// arp.cc — the per-core ARP table (see arp.h).
#include "junction/net/dpdk/arp.h"

#include <rte_mbuf.h>

namespace junction::net::dpdk {

ArpTable::~ArpTable() {
  for (Queued& q : queued_) {
    if (q.m != nullptr) rte_pktmbuf_free(q.m);
  }
}

ArpTable::Entry* ArpTable::Find(Ipv4Addr ip) {
  const std::uint32_t a = ip.host_order();
  for (int i = 0, h = static_cast<int>((a * 2654435761u) % kEntries); i < kEntries;
       ++i, h = (h + 1) % kEntries) {
    if (entries_[h].ip == a) return &entries_[h];
  }
  return nullptr;
}

const ArpTable::Entry* ArpTable::Find(Ipv4Addr ip) const {
  return const_cast<ArpTable*>(this)->Find(ip);
}

ArpTable::Entry* ArpTable::Slot(Ipv4Addr ip, std::uint64_t now) {
  if (Entry* e = Find(ip)) return e;
  const std::uint32_t a = ip.host_order();
  Entry* stalest = nullptr;
  for (int i = 0, h = static_cast<int>((a * 2654435761u) % kEntries); i < kEntries;
       ++i, h = (h + 1) % kEntries) {
    Entry& e = entries_[h];
    if (e.ip == 0) return &e;
    if (e.resolved && (stalest == nullptr || e.expires < stalest->expires)) stalest = &e;
  }
  return stalest;  // nullptr: every entry is pending (a flood of unresolved hops)
}

const rte_ether_addr* ArpTable::Lookup(Ipv4Addr ip, std::uint64_t now) const {
  const Entry* e = Find(ip);
  if (e == nullptr || !e->resolved || e->expires <= now) return nullptr;
  return &e->mac;
}

bool ArpTable::Known(Ipv4Addr ip) const { return Find(ip) != nullptr; }

void ArpTable::Learn(Ipv4Addr ip, const rte_ether_addr& mac, std::uint64_t now) {
  Entry* e = Slot(ip, now);
  if (e == nullptr) return;
  e->ip = ip.host_order();
  e->resolved = true;
  e->mac = mac;
  e->expires = now + timeout_;
  e->tries = 0;
}

ArpTable::QueueResult ArpTable::Queue(rte_mbuf* m, Ipv4Addr ip, std::uint64_t now) {
  if (queued_count_ == kQueued) return QueueResult::kFull;
  Entry* e = Find(ip);
  bool request = false;
  if (e == nullptr || (e->resolved && e->expires <= now)) {
    e = Slot(ip, now);
    if (e == nullptr) return QueueResult::kFull;
    *e = Entry{};
    e->ip = ip.host_order();
    e->tries = 1;
    e->next_retry = now + retry_;
    request = true;
  }
  for (Queued& q : queued_) {
    if (q.m == nullptr) {
      q = Queued{m, ip.host_order()};
      queued_count_++;
      break;
    }
  }
  return request ? QueueResult::kQueuedSendRequest : QueueResult::kQueued;
}

rte_mbuf* ArpTable::TakeQueued(Ipv4Addr ip) {
  if (queued_count_ == 0) return nullptr;
  for (Queued& q : queued_) {
    if (q.m != nullptr && q.ip == ip.host_order()) {
      queued_count_--;
      return std::exchange(q.m, nullptr);
    }
  }
  return nullptr;
}

}  // namespace junction::net::dpdk
