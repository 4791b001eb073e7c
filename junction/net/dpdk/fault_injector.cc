// fault_injector.cc — seeded faults in the port layer (see fault_injector.h).
#include "junction/net/dpdk/fault_injector.h"

#include <rte_mbuf.h>

#include <fmt/format.h>

namespace junction::net::dpdk {
namespace {

std::uint64_t SplitMix(std::uint64_t* s) {
  std::uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Status<void> FaultInjector::Validate(const DpdkFaultOptions& o) {
  for (double r : {o.drop, o.reorder, o.duplicate, o.delay}) {
    if (!(r >= 0 && r <= 1)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("dpdk faults: rate {} is outside [0, 1]", r));
    }
  }
  if (o.drop + o.reorder + o.duplicate + o.delay > 1.0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "dpdk faults: drop + reorder + duplicate + delay must be at most 1");
  }
  return {};
}

FaultInjector::FaultInjector(const DpdkFaultOptions& o, std::uint64_t stream,
                             std::uint64_t tsc_hz)
    : enabled_(o.enabled()), o_(o) {
  rng_ = o.seed ^ (stream * 0xD1B54A32D192ED03ull);
  SplitMix(&rng_);
  delay_cycles_ = tsc_hz / 1'000'000 * o.delay_us;
}

FaultInjector::~FaultInjector() { FreeHeld(); }

double FaultInjector::Uniform() {
  return static_cast<double>(SplitMix(&rng_) >> 11) * 0x1.0p-53;
}

int FaultInjector::Apply(rte_mbuf** in, int n, rte_mbuf** out, int cap, std::uint64_t now,
                         rte_mempool* pool) {
  int k = 0;
  auto emit = [&](rte_mbuf* m) {
    if (k < cap) {
      out[k++] = m;
    } else {
      rte_pktmbuf_free(m);
      stats_.dropped++;
    }
  };
  for (int i = 0; i < n; ++i) {
    rte_mbuf* m = in[i];
    stats_.seen++;
    double u = Uniform();
    if ((u -= o_.drop) < 0) {
      rte_pktmbuf_free(m);
      stats_.dropped++;
      continue;
    }
    if ((u -= o_.duplicate) < 0) {
      rte_mbuf* c = pool != nullptr ? rte_pktmbuf_copy(m, pool, 0, UINT32_MAX) : nullptr;
      emit(m);
      if (c != nullptr) {
        emit(c);
        stats_.duplicated++;
      }
    } else if ((u -= o_.reorder) < 0 && reorder_held_ == nullptr) {
      reorder_held_ = m;
      reorder_due_ = now + delay_cycles_;
      stats_.reordered++;
      continue;  // goes out after the next frame that passes
    } else if ((u -= o_.delay) < 0 && held_count_ < kMaxHeld) {
      held_[(held_head_ + held_count_) % kMaxHeld] = Held{m, now + delay_cycles_};
      held_count_++;
      stats_.delayed++;
      continue;
    } else {
      emit(m);
    }
    if (reorder_held_ != nullptr) emit(std::exchange(reorder_held_, nullptr));
  }
  return k;
}

int FaultInjector::Release(std::uint64_t now, rte_mbuf** out, int cap) {
  int k = 0;
  while (held_count_ > 0 && k < cap && held_[held_head_].due <= now) {
    out[k++] = held_[held_head_].m;
    held_head_ = (held_head_ + 1) % kMaxHeld;
    held_count_--;
  }
  if (reorder_held_ != nullptr && k < cap && reorder_due_ <= now) {
    out[k++] = std::exchange(reorder_held_, nullptr);
  }
  return k;
}

int FaultInjector::FreeHeld() {
  int n = 0;
  while (held_count_ > 0) {
    rte_pktmbuf_free(held_[held_head_].m);
    held_head_ = (held_head_ + 1) % kMaxHeld;
    held_count_--;
    n++;
  }
  if (reorder_held_ != nullptr) {
    rte_pktmbuf_free(std::exchange(reorder_held_, nullptr));
    n++;
  }
  return n;
}

}  // namespace junction::net::dpdk
