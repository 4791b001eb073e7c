// fault_injector.h — seeded drop / reorder / duplicate / delay of frames in the port layer.
//
//   FaultInjector inj(options, /*stream=*/core * 2 + 1);
//   n = inj.Apply(rx, n, out, kOut, rte_rdtsc(), pool);   // after rte_eth_rx_burst
//   n += inj.Release(rte_rdtsc(), out + n, kOut - n);        // held frames that are due
//
// One uniform draw per frame decides its fate, in this order of the rate intervals: drop,
// duplicate, reorder, delay, pass. The generator is seeded with (seed, stream), so the same
// seed and the same sequence of frames give exactly the same faults: a failing case replays.
// Reordered frames are held and sent right after the next frame that passes (or after
// delay_us if none comes); delayed frames are held until delay_us has passed. Held frames are
// bounded (kMaxHeld); past that a frame passes unharmed. Duplicates are copies from `pool`
// (a fault-path allocation; no copy when the pool is empty).
//
// Not thread-safe: one injector per queue and direction, used by the core that owns it.
#pragma once

#include <cstdint>

#include "junction/base/error.h"
#include "junction/net/dpdk/dpdk_options.h"

struct rte_mbuf;
struct rte_mempool;

namespace junction::net::dpdk {

struct FaultStats {
  std::uint64_t seen = 0, dropped = 0, duplicated = 0, reordered = 0, delayed = 0;
};

class FaultInjector {
 public:
  static constexpr int kMaxHeld = 64;

  // Errors: a rate outside [0, 1] or rates summing above 1.
  static Status<void> Validate(const DpdkFaultOptions& o);

  FaultInjector() = default;  // injects nothing
  FaultInjector(const DpdkFaultOptions& o, std::uint64_t stream, std::uint64_t tsc_hz);
  ~FaultInjector();
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  bool enabled() const { return enabled_; }
  bool holding() const { return held_count_ > 0 || reorder_held_ != nullptr; }

  // Passes in[0, n) through the faults; writes what goes on to out (at most cap; frames that
  // do not fit are freed and counted as dropped). Takes ownership of every frame in `in`.
  // Returns how many were written.
  int Apply(rte_mbuf** in, int n, rte_mbuf** out, int cap, std::uint64_t now_tsc,
            rte_mempool* pool);
  // Writes held frames that are due at now_tsc (delayed ones past their time, a reordered
  // one waiting longer than delay_us) to out, at most cap. Returns how many.
  int Release(std::uint64_t now_tsc, rte_mbuf** out, int cap);
  // Frees everything held (at shutdown, or when the faults are replaced). Returns how many.
  int FreeHeld();

  const FaultStats& stats() const { return stats_; }

 private:
  double Uniform();

  bool enabled_ = false;
  DpdkFaultOptions o_;
  std::uint64_t rng_ = 0;
  std::uint64_t delay_cycles_ = 0;
  struct Held {
    rte_mbuf* m;
    std::uint64_t due;
  };
  Held held_[kMaxHeld];  // FIFO: due times are non-decreasing
  int held_head_ = 0, held_count_ = 0;
  rte_mbuf* reorder_held_ = nullptr;
  std::uint64_t reorder_due_ = 0;
  FaultStats stats_;
};

}  // namespace junction::net::dpdk
