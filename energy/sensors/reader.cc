// reader.cc — the PeriodicReader thread.
#include "energy/sensors/reader.h"

#include <time.h>

#include <fmt/format.h>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

Status<void> ValidateSampleInterval(std::chrono::nanoseconds interval) {
  if (interval < kMinSampleInterval) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("energy sample interval {} ns is below the 1 ms minimum: "
                                 "shorter intervals cost more than they measure (sysfs reads, "
                                 "RAPL's own ~1 ms update period); set it to 1 ms or more",
                                 interval.count()));
  }
  return {};
}

PeriodicReader::PeriodicReader(std::vector<CounterSource*> sources, ReaderOptions options,
                               Callback callback)
    : sources_(std::move(sources)), options_(options), callback_(std::move(callback)) {}

Status<std::unique_ptr<PeriodicReader>> PeriodicReader::Start(std::vector<CounterSource*> sources,
                                                              ReaderOptions options,
                                                              Callback callback) {
  if (auto ok = ValidateSampleInterval(options.interval); !ok) return std::unexpected(ok.error());
  if (sources.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "PeriodicReader needs at least one energy source: open RAPL, NVML or a "
                     "replay trace first");
  }
  std::unique_ptr<PeriodicReader> r(
      new PeriodicReader(std::move(sources), options, std::move(callback)));
  auto first = r->ReadAll();
  if (!first) return std::unexpected(first.error());
  auto base = r->meter_.Add(*first);
  if (!base) return std::unexpected(base.error());
  r->thread_ = std::thread([p = r.get()] { p->Run(); });
  return r;
}

PeriodicReader::~PeriodicReader() {
  Stop();
}

void PeriodicReader::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

Status<CounterSnapshot> PeriodicReader::ReadAll() {
  CounterSnapshot all;
  for (CounterSource* s : sources_) {
    auto snap = s->Read();
    if (!snap) return std::unexpected(snap.error());
    if (all.timestamp_ns == 0) all.timestamp_ns = snap->timestamp_ns;
    all.readings.insert(all.readings.end(), snap->readings.begin(), snap->readings.end());
  }
  return all;
}

void PeriodicReader::Run() {
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const int64_t step = options_.interval.count();
  while (!stop_.load(std::memory_order_relaxed)) {
    int64_t ns = next.tv_nsec + step;
    next.tv_sec += ns / 1'000'000'000;
    next.tv_nsec = ns % 1'000'000'000;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    if (stop_.load(std::memory_order_relaxed)) break;
    auto snap = ReadAll();
    if (!snap) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      callback_(std::unexpected(snap.error()));
      continue;
    }
    auto iv = meter_.Add(*snap);
    if (!iv) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      callback_(std::unexpected(iv.error()));
      continue;
    }
    if (!iv->has_value()) continue;
    intervals_.fetch_add(1, std::memory_order_relaxed);
    wraps_.fetch_add((*iv)->wraps, std::memory_order_relaxed);
    callback_(**iv);
    // A slow callback or a preempted thread: do not try to catch up with a burst of reads.
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec)) {
      next = now;
    }
  }
}

}  // namespace energy
