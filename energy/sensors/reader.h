// reader.h — PeriodicReader: a thread that reads one or more CounterSources every interval
// (default 10 ms, never below 1 ms) and hands each derived IntervalEnergy to a callback.
//
//   auto rapl = energy::RaplSensor::Open();
//   auto reader = energy::PeriodicReader::Start({&*rapl}, {},
//       [](const energy::IntervalEnergy& iv) { /* on the reader thread */ });
//   ...
//   (*reader)->Stop();
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "energy/sensors/counter.h"
#include "junction/base/error.h"

namespace energy {

inline constexpr std::chrono::nanoseconds kDefaultSampleInterval = std::chrono::milliseconds(10);
inline constexpr std::chrono::nanoseconds kMinSampleInterval = std::chrono::milliseconds(1);

struct ReaderOptions {
  std::chrono::nanoseconds interval = kDefaultSampleInterval;
};

// kInvalidArgument when interval < 1 ms (the message says why and what to set).
junction::Status<void> ValidateSampleInterval(std::chrono::nanoseconds interval);

class PeriodicReader {
 public:
  // Called on the reader thread, once per interval, in time order. It must not block for
  // long: the next read waits for it. An error from a source is passed as the Error; the
  // reader keeps its baseline, so the following interval covers the failed one (no energy is
  // lost, the interval is only longer).
  using Callback = std::function<void(const junction::Status<IntervalEnergy>&)>;

  // Starts the thread. `sources` are borrowed and must outlive the reader; each is read only by
  // the reader thread until Stop(). Reads all sources once before returning (the baseline).
  // Errors: kInvalidArgument for a bad interval or no source; the first read's error otherwise.
  static junction::Status<std::unique_ptr<PeriodicReader>> Start(
      std::vector<CounterSource*> sources, ReaderOptions options, Callback callback);

  ~PeriodicReader();  // Stop()s
  PeriodicReader(const PeriodicReader&) = delete;
  PeriodicReader& operator=(const PeriodicReader&) = delete;

  // Stops and joins the thread. Blocks for at most one interval plus one read. Idempotent.
  void Stop();

  uint64_t intervals() const { return intervals_.load(std::memory_order_relaxed); }
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }
  uint64_t wraps() const { return wraps_.load(std::memory_order_relaxed); }

 private:
  PeriodicReader(std::vector<CounterSource*> sources, ReaderOptions options, Callback callback);
  junction::Status<CounterSnapshot> ReadAll();
  void Run();

  std::vector<CounterSource*> sources_;
  ReaderOptions options_;
  Callback callback_;
  IntervalMeter meter_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> intervals_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> wraps_{0};
  std::thread thread_;
};

}  // namespace energy
