// arp.h — one core's ARP table (RFC 826): resolved entries with expiry, pending ones with
// retries, and the frames queued while their next hop resolves.
//
// Per core, no sharing: each core resolves for its own transmits; what one core learns from
// the wire it also hands to the others as messages (core_net.h). Times are TSC cycles. No
// allocation after construction; fixed capacities, counted overflow.
#pragma once

#include <rte_ether.h>

#include <cstdint>

#include "junction/net/endpoint.h"

struct rte_mbuf;

namespace junction::net::dpdk {

class ArpTable {
 public:
  static constexpr int kEntries = 256;
  static constexpr int kQueued = 128;  // frames waiting for resolution, all next hops

  ArpTable(std::uint64_t timeout_cycles, std::uint64_t retry_cycles, std::uint32_t retries)
      : timeout_(timeout_cycles), retry_(retry_cycles), retries_(retries) {}
  ~ArpTable();
  ArpTable(const ArpTable&) = delete;
  ArpTable& operator=(const ArpTable&) = delete;

  // The MAC of `ip` if resolved and not expired at `now`.
  const rte_ether_addr* Lookup(Ipv4Addr ip, std::uint64_t now) const;
  // Records ip -> mac (a reply, a request for us, or a message from another core).
  void Learn(Ipv4Addr ip, const rte_ether_addr& mac, std::uint64_t now);
  // Whether `ip` has an entry at all (resolved or pending): RFC 826's merge rule updates only
  // those from frames not addressed to us.
  bool Known(Ipv4Addr ip) const;

  enum class QueueResult { kQueuedSendRequest, kQueued, kFull };
  // Queues frame m (owned by the table from now on) for next hop `ip`; says whether a request
  // must go out now (the first frame for an unresolved hop).
  QueueResult Queue(rte_mbuf* m, Ipv4Addr ip, std::uint64_t now);
  // Removes and returns, one call each, the queued frames for `ip` (after Learn). nullptr:
  // none left.
  rte_mbuf* TakeQueued(Ipv4Addr ip);

  // Housekeeping at `now`: calls request(ip) for each pending hop due a retry, and
  // drop(m) for each frame whose hop ran out of retries (the entry is then forgotten).
  template <typename Request, typename Drop>
  void Tick(std::uint64_t now, Request&& request, Drop&& drop);

  int queued() const { return queued_count_; }

 private:
  struct Entry {
    std::uint32_t ip = 0;  // 0: free
    bool resolved = false;
    rte_ether_addr mac{};
    std::uint64_t expires = 0;     // resolved: trusted until
    std::uint64_t next_retry = 0;  // pending: when to ask again
    std::uint32_t tries = 0;
  };
  Entry* Find(Ipv4Addr ip);
  const Entry* Find(Ipv4Addr ip) const;
  Entry* Slot(Ipv4Addr ip, std::uint64_t now);  // finds or takes (evicting the stalest)

  std::uint64_t timeout_, retry_;
  std::uint32_t retries_;
  Entry entries_[kEntries];
  struct Queued {
    rte_mbuf* m = nullptr;
    std::uint32_t ip = 0;
  };
  Queued queued_[kQueued];
  int queued_count_ = 0;
};

template <typename Request, typename Drop>
void ArpTable::Tick(std::uint64_t now, Request&& request, Drop&& drop) {
  for (Entry& e : entries_) {
    if (e.ip == 0 || e.resolved || e.next_retry > now) continue;
    if (e.tries < retries_) {
      e.tries++;
      e.next_retry = now + retry_;
      request(Ipv4Addr(e.ip));
      continue;
    }
    const Ipv4Addr ip(e.ip);
    e = Entry{};
    while (rte_mbuf* m = TakeQueued(ip)) drop(m);
  }
}

}  // namespace junction::net::dpdk
