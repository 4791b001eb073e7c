// gpu_energy.h — one GPU's cumulative energy counter through NVML, for billing a call's GPU
// joules (read before and after the call; the difference is what the invocation reports).
//
//   auto meter = swiglu::GpuEnergyCounter::Open(pci_bus_id);   // kUnavailable: no NVML/counter
//   auto before = meter->ReadMillijoules();  ...  auto after = meter->ReadMillijoules();
//
// NVML is loaded with dlopen at run time (libnvidia-ml.so.1), so the function builds and runs
// on machines without the NVIDIA driver. The counter is device-wide: it counts everything the
// GPU spent meanwhile, its idle power and other processes' work included. Its resolution is
// 1 mJ and NVML refreshes it every few ms (device dependent), so a short call reads as a
// multiple of the refresh step, possibly 0.
//
// This is the function's own reader (a function depends on the SDK header, not on the node's
// energy/ library, which has the node-side NvmlSensor). Move-only; one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "junction/base/error.h"

namespace swiglu {

class GpuEnergyCounter {
 public:
  // The device with PCI bus id `pci_bus_id` ("0000:3b:00.0", as CUDA reports it), or NVML
  // index 0 when it is empty. Errors: kUnavailable (no library, no symbol, NVML fails to
  // initialise, no such device, no energy counter on it), naming the step that failed.
  static junction::Status<GpuEnergyCounter> Open(const std::string& pci_bus_id);

  GpuEnergyCounter(GpuEnergyCounter&&) noexcept;
  GpuEnergyCounter& operator=(GpuEnergyCounter&&) noexcept;
  ~GpuEnergyCounter();  // nvmlShutdown + dlclose

  // Millijoules since the driver loaded. Errors: kIo with NVML's message.
  junction::Status<std::uint64_t> ReadMillijoules() const;

 private:
  struct Impl;
  explicit GpuEnergyCounter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace swiglu
