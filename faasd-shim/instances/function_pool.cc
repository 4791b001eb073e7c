// function_pool.cc — picking, cold-starting and reaping the instances of one function.
#include "faasd-shim/instances/function_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <set>

namespace faasnode::instances {

std::string_view InternName(std::string_view s) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> names;
  std::lock_guard<std::mutex> lock(mu);
  auto it = names.find(s);
  if (it == names.end()) it = names.emplace(s).first;
  return *it;
}

using junction::sched::Clock;

namespace {
// An instance's last use only ages it towards the idle timeout (seconds to minutes): the
// coarse clock (one tick behind at most) spares a full clock read on every call.
std::int64_t NowNs() { return junction::sched::CoarseMonoNs(); }
}  // namespace

FunctionPool::FunctionPool(std::string name, std::shared_ptr<const store::NativeFunction> fn,
                           PoolOptions options)
    : name_(std::move(name)),
      stable_name_(InternName(name_)),
      options_(std::move(options)),
      factory_([fn = std::move(fn), this]() -> junction::Status<std::unique_ptr<store::FunctionInstance>> {
        auto inst = store::Instance::Create(fn, options_.env, options_.instance);
        if (!inst) return std::unexpected(inst.error());
        return std::make_unique<store::Instance>(std::move(*inst));
      }) {
  floor_.store(options_.min_instances, std::memory_order_relaxed);
}

FunctionPool::FunctionPool(std::string name, InstanceFactory factory, PoolOptions options)
    : name_(std::move(name)), stable_name_(InternName(name_)), options_(std::move(options)), factory_(std::move(factory)) {
  floor_.store(options_.min_instances, std::memory_order_relaxed);
}

FunctionPool::~FunctionPool() = default;

InvokeOutcome FunctionPool::Invoke(const store::Request& request, store::Response& response) {
  InvokeOutcome out;
  Slot* slot = nullptr;
  bool cold = false;
  invocations_.fetch_add(1, std::memory_order_relaxed);
  {
    std::unique_lock<junction::sched::Mutex> lock(mu_);
    while (true) {
      Slot* best = nullptr;
      int best_n = 0;
      for (auto& s : slots_) {
        const int n = s->inflight.load(std::memory_order_relaxed);
        if (options_.max_inflight > 0 && n >= options_.max_inflight) continue;
        if (best == nullptr || n < best_n) {
          best = s.get();
          best_n = n;
        }
      }
      if (best != nullptr) {
        slot = best;
        break;
      }
      const int total = static_cast<int>(slots_.size()) + starting_;
      if (total < options_.replicas) {
        cold = true;
        ++starting_;
        break;
      }
      if (starting_ > 0) {  // an instance is starting: wait for it rather than refuse
        started_.Wait(lock);
        continue;
      }
      rejected_.fetch_add(1, std::memory_order_relaxed);
      out.kind = InvokeOutcome::Kind::kOverloaded;
      out.error = fmt::format("function {}: all {} instance(s) have {} request(s) in flight, their "
                              "limit; retry later, or raise max_inflight or replicas",
                              name_, slots_.size(), options_.max_inflight);
      return out;
    }
    if (slot != nullptr) {
      slot->inflight.fetch_add(1, std::memory_order_relaxed);
      slot->users.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (cold) {
    const auto t0 = Clock::now();
    auto inst = factory_();
    out.cold_start_time = Clock::now() - t0;
    std::unique_lock<junction::sched::Mutex> lock(mu_);
    --starting_;
    started_.NotifyAll();
    if (!inst) {
      out.kind = InvokeOutcome::Kind::kColdStartFailed;
      out.error = fmt::format("function {} failed to start: {}", name_, inst.error().message());
      return out;
    }
    auto s = std::make_unique<Slot>();
    s->instance = std::move(*inst);
    s->inflight.store(1, std::memory_order_relaxed);
    s->users.store(1, std::memory_order_relaxed);
    slot = s.get();
    slots_.push_back(std::move(s));
    out.cold_start = true;
    cold_starts_.fetch_add(1, std::memory_order_relaxed);
    cold_ns_.fetch_add(static_cast<std::uint64_t>(out.cold_start_time.count()), std::memory_order_relaxed);
    const auto ns = static_cast<std::uint64_t>(out.cold_start_time.count());
    call_cold_.fetch_add(1, std::memory_order_relaxed);
    call_cold_ns_.fetch_add(ns, std::memory_order_relaxed);
    const double seconds = static_cast<double>(ns) * 1e-9;
    std::size_t b = 0;
    while (b < kColdStartBounds.size() && seconds > kColdStartBounds[b]) ++b;
    call_cold_buckets_[b].fetch_add(1, std::memory_order_relaxed);
  }
  auto st = slot->instance->Invoke(request, response);
  slot->last_used_ns.store(NowNs(), std::memory_order_relaxed);
  slot->inflight.fetch_sub(1, std::memory_order_relaxed);
  slot->users.fetch_sub(1, std::memory_order_release);  // last touch of the slot
  if (!st) {
    out.kind = InvokeOutcome::Kind::kFunctionFailed;
    out.error = st.error().message();
  }
  return out;
}

int FunctionPool::ReapIdle(Clock::time_point now) {
  if (options_.idle_timeout.count() <= 0) return 0;
  const std::int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const std::int64_t idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.idle_timeout).count();
  std::vector<std::unique_ptr<Slot>> gone;
  {
    std::lock_guard<junction::sched::Mutex> lock(mu_);
    const std::size_t keep = static_cast<std::size_t>(std::max(0, floor()));
    for (auto it = slots_.begin(); it != slots_.end();) {
      Slot& s = **it;
      if (slots_.size() > keep && s.users.load(std::memory_order_acquire) == 0 && s.inflight.load(std::memory_order_relaxed) == 0 &&
          now_ns - s.last_used_ns.load(std::memory_order_relaxed) > idle_ns) {
        gone.push_back(std::move(*it));
        it = slots_.erase(it);
      } else {
        ++it;
      }
    }
  }
  reaped_.fetch_add(gone.size(), std::memory_order_relaxed);
  return static_cast<int>(gone.size());  // fini runs here, outside the lock
}

junction::Status<void> FunctionPool::Prewarm(int count) {
  count = std::min(count, options_.replicas);
  while (true) {
    {
      std::lock_guard<junction::sched::Mutex> lock(mu_);
      if (static_cast<int>(slots_.size()) + starting_ >= count) return {};
      ++starting_;
    }
    const auto t0 = Clock::now();
    auto inst = factory_();
    const auto took = Clock::now() - t0;
    std::lock_guard<junction::sched::Mutex> lock(mu_);
    --starting_;
    started_.NotifyAll();
    if (!inst) {
      return junction::MakeError(inst.error().code(),
                                 fmt::format("function {} failed to start: {}", name_, inst.error().message()));
    }
    auto s = std::make_unique<Slot>();
    s->instance = std::move(*inst);
    s->last_used_ns.store(NowNs(), std::memory_order_relaxed);
    slots_.push_back(std::move(s));
    cold_starts_.fetch_add(1, std::memory_order_relaxed);
    cold_ns_.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
                       std::memory_order_relaxed);
  }
}

PoolStats FunctionPool::stats() {
  PoolStats p;
  {
    std::lock_guard<junction::sched::Mutex> lock(mu_);
    p.instances = static_cast<int>(slots_.size());
  }
  p.cold_starts = cold_starts_.load(std::memory_order_relaxed);
  p.cold_start_ns_total = cold_ns_.load(std::memory_order_relaxed);
  p.call_cold_starts.count = call_cold_.load(std::memory_order_relaxed);
  p.call_cold_starts.ns_total = call_cold_ns_.load(std::memory_order_relaxed);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < kColdStartBounds.size(); ++i) {
    below += call_cold_buckets_[i].load(std::memory_order_relaxed);
    p.call_cold_starts.cumulative[i] = below;
  }
  p.rejected_429 = rejected_.load(std::memory_order_relaxed);
  p.scaled_down = reaped_.load(std::memory_order_relaxed);
  return p;
}

}  // namespace faasnode::instances
