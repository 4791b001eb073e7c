// gpu_energy.cc — GpuEnergyCounter: NVML through dlopen (init, device by PCI id, energy).
#include "functions/swiglu-mlp/function/gpu_energy.h"

#include <dlfcn.h>

#include <utility>

namespace swiglu {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {
// The few NVML declarations used (nvml.h is not on the build machines): opaque device
// handles, int return codes with 0 = NVML_SUCCESS.
using NvmlDevice = struct NvmlDeviceOpaque*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using ByIndexFn = int (*)(unsigned int, NvmlDevice*);
using ByPciFn = int (*)(const char*, NvmlDevice*);
using EnergyFn = int (*)(NvmlDevice, unsigned long long*);
using ErrorStringFn = const char* (*)(int);
}  // namespace

struct GpuEnergyCounter::Impl {
  void* lib = nullptr;
  bool initialised = false;
  ShutdownFn shutdown = nullptr;
  EnergyFn energy = nullptr;
  ErrorStringFn error_string = nullptr;
  NvmlDevice device = nullptr;

  std::string Why(int rc) const {
    return error_string != nullptr ? error_string(rc) : "NVML error " + std::to_string(rc);
  }
  ~Impl() {
    if (initialised && shutdown != nullptr) shutdown();
    if (lib != nullptr) dlclose(lib);
  }
};

Status<GpuEnergyCounter> GpuEnergyCounter::Open(const std::string& pci_bus_id) {
  auto impl = std::make_unique<Impl>();
  impl->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (impl->lib == nullptr) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot load libnvidia-ml.so.1 (no NVIDIA driver): no GPU energy figures");
  }
  auto sym = [&](const char* name) { return dlsym(impl->lib, name); };
  auto init = reinterpret_cast<InitFn>(sym("nvmlInit_v2"));
  impl->shutdown = reinterpret_cast<ShutdownFn>(sym("nvmlShutdown"));
  auto by_index = reinterpret_cast<ByIndexFn>(sym("nvmlDeviceGetHandleByIndex_v2"));
  auto by_pci = reinterpret_cast<ByPciFn>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  impl->energy = reinterpret_cast<EnergyFn>(sym("nvmlDeviceGetTotalEnergyConsumption"));
  impl->error_string = reinterpret_cast<ErrorStringFn>(sym("nvmlErrorString"));
  if (init == nullptr || impl->shutdown == nullptr || by_index == nullptr || by_pci == nullptr ||
      impl->energy == nullptr) {
    return MakeError(ErrorCode::kUnavailable,
                     "libnvidia-ml.so.1 lacks an NVML call this reader needs (driver too old)");
  }
  if (int rc = init(); rc != 0) {
    return MakeError(ErrorCode::kUnavailable, "nvmlInit_v2: " + impl->Why(rc));
  }
  impl->initialised = true;
  int rc = pci_bus_id.empty() ? by_index(0, &impl->device)
                              : by_pci(pci_bus_id.c_str(), &impl->device);
  if (rc != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "NVML has no device " + (pci_bus_id.empty() ? "0" : pci_bus_id) + ": " +
                         impl->Why(rc));
  }
  unsigned long long mj = 0;
  if (rc = impl->energy(impl->device, &mj); rc != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "nvmlDeviceGetTotalEnergyConsumption: " + impl->Why(rc) +
                         " (GPUs before Volta have no energy counter)");
  }
  return GpuEnergyCounter(std::move(impl));
}

GpuEnergyCounter::GpuEnergyCounter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuEnergyCounter::GpuEnergyCounter(GpuEnergyCounter&&) noexcept = default;
GpuEnergyCounter& GpuEnergyCounter::operator=(GpuEnergyCounter&&) noexcept = default;
GpuEnergyCounter::~GpuEnergyCounter() = default;

Status<std::uint64_t> GpuEnergyCounter::ReadMillijoules() const {
  unsigned long long mj = 0;
  if (int rc = impl_->energy(impl_->device, &mj); rc != 0) {
    return MakeError(ErrorCode::kIo, "nvmlDeviceGetTotalEnergyConsumption: " + impl_->Why(rc));
  }
  return static_cast<std::uint64_t>(mj);
}

}  // namespace swiglu
