// nvml.cc — NvmlSensor: the few NVML entry points it needs, declared here and bound by dlsym.
#include "energy/sensors/nvml.h"

#include <dlfcn.h>

#include <fmt/format.h>
#include <ctime>
#include <vector>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

// From NVML's public API (nvml.h): nvmlReturn_t is an int enum, 0 = NVML_SUCCESS; a device
// handle is an opaque pointer.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using GetCountFn = NvmlReturn (*)(unsigned int*);
using GetHandleFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using GetEnergyFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);  // millijoules
using ErrorStringFn = const char* (*)(NvmlReturn);

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

struct NvmlSensor::Impl {
  void* lib = nullptr;
  bool initialised = false;
  ShutdownFn shutdown = nullptr;
  GetEnergyFn get_energy = nullptr;
  ErrorStringFn error_string = nullptr;
  std::vector<NvmlDevice> devices;

  std::string Describe(NvmlReturn r) const {
    if (error_string != nullptr) return fmt::format("{} ({})", error_string(r), r);
    return fmt::format("NVML error {}", r);
  }

  ~Impl() {
    if (initialised && shutdown != nullptr) shutdown();
    if (lib != nullptr) dlclose(lib);
  }
};

NvmlSensor::NvmlSensor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NvmlSensor::NvmlSensor(NvmlSensor&&) noexcept = default;
NvmlSensor& NvmlSensor::operator=(NvmlSensor&&) noexcept = default;
NvmlSensor::~NvmlSensor() = default;

uint32_t NvmlSensor::device_count() const {
  return static_cast<uint32_t>(impl_->devices.size());
}

Status<NvmlSensor> NvmlSensor::Open(const NvmlOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->lib = dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (impl->lib == nullptr) {
    const char* why = dlerror();
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("NVML unavailable: dlopen({}) failed: {}; no GPU energy "
                                 "figures (install the NVIDIA driver to get them)",
                                 options.library, why != nullptr ? why : "unknown"));
  }
  auto sym = [&](const char* name) { return dlsym(impl->lib, name); };
  auto init = reinterpret_cast<InitFn>(sym("nvmlInit_v2"));
  impl->shutdown = reinterpret_cast<ShutdownFn>(sym("nvmlShutdown"));
  auto get_count = reinterpret_cast<GetCountFn>(sym("nvmlDeviceGetCount_v2"));
  auto get_handle = reinterpret_cast<GetHandleFn>(sym("nvmlDeviceGetHandleByIndex_v2"));
  impl->get_energy = reinterpret_cast<GetEnergyFn>(sym("nvmlDeviceGetTotalEnergyConsumption"));
  impl->error_string = reinterpret_cast<ErrorStringFn>(sym("nvmlErrorString"));
  if (init == nullptr || impl->shutdown == nullptr || get_count == nullptr ||
      get_handle == nullptr || impl->get_energy == nullptr) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("NVML unavailable: {} lacks nvmlInit_v2, nvmlDeviceGetCount_v2, "
                                 "nvmlDeviceGetHandleByIndex_v2 or "
                                 "nvmlDeviceGetTotalEnergyConsumption; update the NVIDIA driver",
                                 options.library));
  }
  if (NvmlReturn r = init(); r != kNvmlSuccess) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("NVML unavailable: nvmlInit failed: {}; check the NVIDIA "
                                 "driver (nvidia-smi)",
                                 impl->Describe(r)));
  }
  impl->initialised = true;
  unsigned int count = 0;
  if (NvmlReturn r = get_count(&count); r != kNvmlSuccess || count == 0) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("NVML unavailable: no GPU device ({}); no GPU energy figures",
                                 r != kNvmlSuccess ? impl->Describe(r) : "count 0"));
  }
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice dev = nullptr;
    if (NvmlReturn r = get_handle(i, &dev); r != kNvmlSuccess) {
      return MakeError(
          ErrorCode::kUnavailable,
          fmt::format("NVML: cannot get GPU {}: {}; check nvidia-smi", i, impl->Describe(r)));
    }
    unsigned long long mj = 0;
    if (NvmlReturn r = impl->get_energy(dev, &mj); r != kNvmlSuccess) {
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("NVML: GPU {} has no total-energy counter: {} (needs Volta "
                                   "or newer); no GPU energy figures",
                                   i, impl->Describe(r)));
    }
    impl->devices.push_back(dev);
  }
  return NvmlSensor(std::move(impl));
}

Status<CounterSnapshot> NvmlSensor::Read() {
  CounterSnapshot snap;
  snap.timestamp_ns = RealtimeNs();
  snap.readings.reserve(impl_->devices.size());
  for (size_t i = 0; i < impl_->devices.size(); ++i) {
    unsigned long long mj = 0;
    if (NvmlReturn r = impl_->get_energy(impl_->devices[i], &mj); r != kNvmlSuccess) {
      return MakeError(ErrorCode::kIo,
                       fmt::format("NVML: reading the energy of GPU {} failed: {}; check "
                                   "nvidia-smi",
                                   i, impl_->Describe(r)));
    }
    snap.readings.push_back(
        CounterReading{CounterKey{Source::kNvml, Zone::kGpu, static_cast<uint32_t>(i)},
                       Microjoules{static_cast<uint64_t>(mj) * 1000}, Microjoules{0}});
  }
  return snap;
}

}  // namespace energy
