// gateway_metrics.cc — per-core invocation counters and their gateway-named exposition.
#include "faasd-shim/metrics/gateway_metrics.h"

#include <fmt/format.h>

#include "junction/sched/sched.h"

namespace faasnode::metrics {
namespace {

constexpr int kMaxCode = 600;  // codes 0..599; anything else counts as 0 ("not an HTTP code")

void Bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct TransparentHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

}  // namespace

// One function's counters on one core: written only by that core.
struct alignas(64) GatewayMetrics::Slot {
  std::atomic<std::uint64_t> started{0};
  std::atomic<std::uint64_t> finished{0};
  std::atomic<std::uint64_t> sum_ns{0};
  std::array<std::atomic<std::uint64_t>, kDefaultBuckets.size()> buckets{};  // not cumulative
  std::array<std::atomic<std::uint64_t>, kMaxCode> codes{};
};

struct GatewayMetrics::Function {
  std::string label;  // NAME.NS
  std::vector<std::unique_ptr<Slot>> slots;  // one per core, plus the off-runtime one
};

// A core's own lookup table: label -> its slot. Touched only by that core (the off-runtime
// table under mu_).
struct alignas(64) GatewayMetrics::CoreTable {
  std::unordered_map<std::string, Slot*, TransparentHash, std::equal_to<>> slots;
  // The slot found last, by name and namespace apart: calls to one function in a row (the
  // usual case) skip building NAME.NS and hashing it, twice per call. Slots are never freed.
  std::string last_name, last_ns;
  Slot* last = nullptr;
};

GatewayMetrics::GatewayMetrics(int num_cores, ServiceLister services)
    : num_cores_(num_cores < 1 ? 1 : num_cores), services_(std::move(services)) {
  for (int i = 0; i <= num_cores_; ++i) cores_.push_back(std::make_unique<CoreTable>());
}

GatewayMetrics::~GatewayMetrics() = default;

GatewayMetrics::Slot* GatewayMetrics::SlotFor(std::string_view name, std::string_view ns,
                                              std::unique_lock<std::mutex>& off_runtime) {
  int core = junction::sched::InRuntime() ? junction::sched::CurrentCore() : -1;
  if (core < 0 || core >= num_cores_) {
    core = num_cores_;
    off_runtime = std::unique_lock(mu_);
  }
  CoreTable& table = *cores_[core];
  if (table.last != nullptr && table.last_name == name && table.last_ns == ns) return table.last;
  Slot* slot = SlotForLabel(table, core, name, ns, off_runtime);
  table.last_name.assign(name);
  table.last_ns.assign(ns);
  table.last = slot;
  return slot;
}

GatewayMetrics::Slot* GatewayMetrics::SlotForLabel(CoreTable& table, int core, std::string_view name,
                                                   std::string_view ns,
                                                   const std::unique_lock<std::mutex>& off_runtime) {
  // The label NAME.NS, built without allocating for names that fit.
  char buf[256];
  std::string heap;
  std::string_view label;
  if (name.size() + 1 + ns.size() <= sizeof(buf)) {
    std::copy(name.begin(), name.end(), buf);
    buf[name.size()] = '.';
    std::copy(ns.begin(), ns.end(), buf + name.size() + 1);
    label = std::string_view(buf, name.size() + 1 + ns.size());
  } else {
    heap = fmt::format("{}.{}", name, ns);
    label = heap;
  }
  if (auto it = table.slots.find(label); it != table.slots.end()) return it->second;
  // First call of this function on this core: create (or find) the function's slots.
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (!off_runtime.owns_lock()) lock.lock();
  auto fit = functions_.find(label);
  if (fit == functions_.end()) {
    auto f = std::make_unique<Function>();
    f->label = std::string(label);
    for (int i = 0; i <= num_cores_; ++i) f->slots.push_back(std::make_unique<Slot>());
    fit = functions_.emplace(f->label, std::move(f)).first;
  }
  Slot* slot = fit->second->slots[core].get();
  table.slots.emplace(std::string(label), slot);
  return slot;
}

void GatewayMetrics::Started(std::string_view name, std::string_view ns) {
  std::unique_lock<std::mutex> off_runtime;
  Bump(SlotFor(name, ns, off_runtime)->started);
}

void GatewayMetrics::Finished(std::string_view name, std::string_view ns, int code, double seconds) {
  std::unique_lock<std::mutex> off_runtime;
  Slot* s = SlotFor(name, ns, off_runtime);
  Bump(s->finished);
  Bump(s->sum_ns, seconds > 0 ? static_cast<std::uint64_t>(seconds * 1e9) : 0);
  std::size_t b = 0;
  while (b < kDefaultBuckets.size() && seconds > kDefaultBuckets[b]) ++b;
  if (b < kDefaultBuckets.size()) Bump(s->buckets[b]);
  Bump(s->codes[code >= 0 && code < kMaxCode ? code : 0]);
}

void GatewayMetrics::Collect(MetricWriter& w) const {
  struct Sum {
    std::string label;
    std::uint64_t started = 0, finished = 0, sum_ns = 0;
    std::array<std::uint64_t, kDefaultBuckets.size()> buckets{};
    std::array<std::uint64_t, kMaxCode> codes{};
  };
  std::vector<Sum> sums;
  {
    std::lock_guard lock(mu_);
    sums.reserve(functions_.size());
    for (const auto& [label, f] : functions_) {
      Sum& s = sums.emplace_back();
      s.label = label;
      for (const auto& slot : f->slots) {
        s.started += slot->started.load(std::memory_order_relaxed);
        s.finished += slot->finished.load(std::memory_order_relaxed);
        s.sum_ns += slot->sum_ns.load(std::memory_order_relaxed);
        for (std::size_t i = 0; i < s.buckets.size(); ++i) s.buckets[i] += slot->buckets[i].load(std::memory_order_relaxed);
        for (int c = 0; c < kMaxCode; ++c) s.codes[c] += slot->codes[c].load(std::memory_order_relaxed);
      }
    }
  }
  w.Family("gateway_function_invocation_started", "counter", "The total number of function HTTP requests started.");
  for (const auto& s : sums) w.Sample({{"function_name", s.label}}, static_cast<double>(s.started));
  w.Family("gateway_function_invocation_total", "counter", "Function metrics");
  for (const auto& s : sums) {
    for (int c = 0; c < kMaxCode; ++c) {
      if (s.codes[c] == 0) continue;
      const std::string code = std::to_string(c);
      w.Sample({{"function_name", s.label}, {"code", code}}, static_cast<double>(s.codes[c]));
    }
  }
  w.Family("gateway_functions_seconds", "histogram", "Function time taken");
  for (const auto& s : sums) {
    std::array<std::uint64_t, kDefaultBuckets.size()> cumulative{};
    std::uint64_t run = 0;
    for (std::size_t i = 0; i < s.buckets.size(); ++i) cumulative[i] = run += s.buckets[i];
    w.Histogram({{"function_name", s.label}}, kDefaultBuckets, cumulative, s.finished,
                static_cast<double>(s.sum_ns) / 1e9);
  }
  w.Family("gateway_service_count", "gauge", "Service replicas");
  if (services_) {
    for (const auto& svc : services_()) w.Sample({{"function_name", svc.function_name}}, svc.replicas);
  }
}

}  // namespace faasnode::metrics
