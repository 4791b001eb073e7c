// nvml_test.cc — NvmlSensor: absent library → unavailable; present (GPU machines) → counters.
#include "energy/sensors/nvml.h"

#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace energy {
namespace {

TEST(NvmlSensorTest, MissingLibraryIsUnavailableWithAReason) {
  auto s = NvmlSensor::Open({.library = "libnvidia-ml-does-not-exist.so.1"});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), junction::ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message().find("no GPU energy"), std::string::npos) << s.error().message();
}

// On a machine with the NVIDIA driver this exercises the real counter; elsewhere it checks that
// the default library's absence is reported as unavailable, never as a crash or a zero figure.
TEST(NvmlSensorTest, DefaultLibraryMatchesWhatDlopenFinds) {
  void* probe = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  auto s = NvmlSensor::Open();
  if (probe == nullptr) {
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), junction::ErrorCode::kUnavailable);
    return;
  }
  dlclose(probe);
  if (!s) GTEST_SKIP() << "driver library present but NVML unusable: " << s.error().message();
  ASSERT_GT(s->device_count(), 0u);
  auto a = s->Read();
  ASSERT_TRUE(a) << a.error().message();
  usleep(200'000);
  auto b = s->Read();
  ASSERT_TRUE(b) << b.error().message();
  ASSERT_EQ(a->readings.size(), s->device_count());
  IntervalMeter meter;
  ASSERT_TRUE(meter.Add(*a));
  auto iv = meter.Add(*b);
  ASSERT_TRUE(iv && iv->has_value());
  const IntervalEnergy& e = **iv;
  EXPECT_TRUE(e.joules.Has(Zone::kGpu));
  EXPECT_EQ(e.joules.sources.ToString(), "nvml");
  // An idle data-centre GPU draws tens of watts: 0.2 s is well above 0 J and below 1 kW * 0.2 s
  // per device.
  EXPECT_GT(e.joules[Zone::kGpu].value, 0.0);
  EXPECT_LT(e.joules[Zone::kGpu].value, 200.0 * s->device_count());
  std::printf("nvml: %u devices, %.3f J in %.3f s\n", s->device_count(), e.joules[Zone::kGpu].value,
              (e.end_ns - e.begin_ns) * 1e-9);
}

}  // namespace
}  // namespace energy
