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
  return r;
}

NetCounters NetCounterSet::Total() const {
  NetCounters t;
  for (int c = -1; c < num_cores_; ++c) t += Read(c);
  return t;
}

}  // namespace junction::net
