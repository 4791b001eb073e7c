// nvml.h — GPU energy through NVML's total-energy counter, loaded with dlopen at run time so
// the node builds and runs on machines without the NVIDIA driver.
//
//   auto gpu = energy::NvmlSensor::Open();
//   if (!gpu) { /* kUnavailable: no libnvidia-ml.so.1 or no GPU: no GPU figures */ }
//   auto snap = gpu->Read();   // zone gpu, domain = device index, cumulative microjoules
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "energy/sensors/counter.h"
#include "junction/base/error.h"

namespace energy {

struct NvmlOptions {
  std::string library = "libnvidia-ml.so.1";  // what dlopen() is given
};

// Move-only owner of the dlopen handle and NVML's initialisation. Not thread-safe.
class NvmlSensor final : public CounterSource {
 public:
  // Errors: kUnavailable when the library cannot be loaded, lacks a symbol, NVML fails to
  // initialise, there is no device, or a device has no energy counter (pre-Volta) — the node
  // then has no GPU figures, which is not a failure of the node.
  static junction::Status<NvmlSensor> Open(const NvmlOptions& options = {});

  NvmlSensor(NvmlSensor&&) noexcept;
  NvmlSensor& operator=(NvmlSensor&&) noexcept;
  ~NvmlSensor() override;  // nvmlShutdown + dlclose

  // One reading per device (zone gpu, domain = index); NVML's millijoules scaled to
  // microjoules; max_range 0 (the 64-bit counter does not wrap). Errors: kIo naming the device.
  junction::Status<CounterSnapshot> Read() override;
  Source source() const override { return Source::kNvml; }

  uint32_t device_count() const;

 private:
  struct Impl;
  explicit NvmlSensor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace energy
