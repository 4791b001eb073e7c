// counters.h — per-core network counters: one cache-line struct per core, only increasing.
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
  static_assert(sizeof(Slot) == 64, "one cache line per core");

  int num_cores_;
  std::unique_ptr<Slot[]> slots_;  // [0, num_cores) per core, [num_cores] outside
};

}  // namespace junction::net
