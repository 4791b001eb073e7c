// swiglu_gpu_test.cc — every GPU gate/up variant and the cuBLASLt down projection against the
// fp64 reference: the same cases as the CPU test. Skips ("no CUDA device") without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/function/gpu_energy.h"
#include "functions/swiglu-mlp/gpu_mlp.h"
#include "functions/swiglu-mlp/prng.h"
#include "functions/swiglu-mlp/reference.h"
#include "functions/swiglu-mlp/shapes.h"
#include "functions/swiglu-mlp/weights.h"

namespace swiglu {
namespace {

constexpr double kMinExactRate = 0.995;

// Skips the test (with the reason) unless a CUDA device is present.
#define REQUIRE_CUDA_DEVICE()                                                  \
  do {                                                                         \
    auto probe = GpuMlp::Probe(0);                                             \
    if (!probe) GTEST_SKIP() << "no CUDA device: " << probe.error().message(); \
  } while (0)

struct Case {
  std::string name;
  MlpWeights w;
  std::vector<Bf16> x;
  int tokens;
};

Case SeededCase(std::string name, MlpShape shape, int tokens, uint64_t seed) {
  return Case{std::move(name), MakeSeededWeights(shape, seed, 2),
              MakeSeededActivations(tokens, shape.hidden, seed + 1), tokens};
}

Case GateNear100Case() {
  const int k = 896, n = 256, tokens = 8;
  Case c = SeededCase("gate~+-100", CustomShape(k, n), tokens, 5);
  uint64_t key = StreamKey(5, 77);
  for (size_t i = 0; i < c.x.size(); ++i) {
    c.x[i] = Bf16FromFloat(1.0f + 0.05f * SeededValue(key, i, 1.0f));
  }
  for (int j = 0; j < n; ++j) {
    float target = (j % 2 ? -1.0f : 1.0f) * (80.0f + 40.0f * (j / 2) / (n / 2));
    for (int i = 0; i < k; ++i)
      c.w.gate[static_cast<size_t>(j) * k + i] = Bf16FromFloat(target / k);
  }
  return c;
}

Case NonFiniteCase() {
  Case c = SeededCase("nan/inf", CustomShape(64, 72), 4, 9);
  c.x[0 * 64 + 5] = Bf16FromFloat(std::nanf(""));
  c.x[1 * 64 + 7] = Bf16FromFloat(INFINITY);
  c.x[2 * 64 + 3] = Bf16FromFloat(-INFINITY);
  return c;
}

std::vector<Case> Cases() {
  std::vector<Case> v;
  v.push_back(SeededCase("0.5B M=6", kQwen25Shapes[0], 6, 1));
  v.push_back(SeededCase("tails M=37 N=200", CustomShape(896, 200), 37, 2));
  v.push_back(SeededCase("tails M=130 N=328", CustomShape(896, 328), 130, 4));
  v.push_back(SeededCase("K tail K=904", CustomShape(904, 136), 9, 3));
  // 9 x 16 = 144 tiles of 128x128 > 132 SMs: the persistent sm_90a schedule takes a second
  // tile with its pipeline phase carried over (K = 320: 5 k-steps over 4 stages).
  v.push_back(SeededCase("persistent M=1100 N=2000 K=320", CustomShape(320, 2000), 1100, 6));
  v.push_back(GateNear100Case());
  v.push_back(NonFiniteCase());
  return v;
}

TEST(GpuMlp, EveryVariantMatchesReference) {
  REQUIRE_CUDA_DEVICE();
  int ran = 0;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    ReferenceResult ref = ReferenceGateUp(c.x, c.tokens, c.w, 0);
    auto mlp = GpuMlp::Create(c.w.shape, {.max_tokens = c.tokens});
    ASSERT_TRUE(mlp.has_value()) << mlp.error().message();
    ASSERT_TRUE(mlp->UploadWeights(c.w).has_value());
    ASSERT_TRUE(mlp->UploadInput(c.x, c.tokens).has_value());
    double fused_rate = 1.0, unfused_rate = 1.0;
    for (GpuGateUp v : kAllGpuGateUp) {
      std::string name(GpuGateUpName(v));
      if (!mlp->Supports(v)) {
        std::printf("[%s] %s: not supported on %s, skipped\n", c.name.c_str(), name.c_str(),
                    mlp->device().name.c_str());
        continue;
      }
      auto run = mlp->GateUp(v);
      ASSERT_TRUE(run.has_value()) << name << ": " << run.error().message();
      auto h = mlp->ReadH();
      ASSERT_TRUE(h.has_value()) << h.error().message();
      MatchStats s = Compare(*h, ref);
      std::printf("[%s] %-20s %s\n", c.name.c_str(), name.c_str(), s.Summary().c_str());
      EXPECT_EQ(s.nonfinite_mismatch, 0) << name;
      if (v == GpuGateUp::kUnfusedCublas) {
        unfused_rate = s.ExactRate();
        continue;  // reported beside the fused rates; it rounds gate and up first
      }
      ++ran;
      fused_rate = std::min(fused_rate, s.ExactRate());
      EXPECT_TRUE(s.AllWithinTolerance()) << name << ": " << s.Summary();
      EXPECT_GE(s.ExactRate(), kMinExactRate) << name << ": " << s.Summary();
    }
    std::printf("[%s] worst fused exact rate %.4f%%, unfused %.4f%%\n", c.name.c_str(),
                100 * fused_rate, 100 * unfused_rate);
  }
  EXPECT_GT(ran, 0) << "no fused variant runs on this device";
}

TEST(GpuMlp, DownMatchesReference) {
  REQUIRE_CUDA_DEVICE();
  Case c = SeededCase("down", CustomShape(200, 1216), 11, 13);
  auto mlp = GpuMlp::Create(c.w.shape, {.max_tokens = c.tokens});
  ASSERT_TRUE(mlp.has_value()) << mlp.error().message();
  ASSERT_TRUE(mlp->UploadWeights(c.w).has_value());
  ASSERT_TRUE(mlp->UploadInput(c.x, c.tokens).has_value());
  GpuGateUp v =
      mlp->Supports(GpuGateUp::kFusedSm80) ? GpuGateUp::kFusedSm80 : GpuGateUp::kUnfusedCublas;
  auto fwd = mlp->Forward(v);
  ASSERT_TRUE(fwd.has_value()) << fwd.error().message();
  auto h = mlp->ReadH();
  ASSERT_TRUE(h.has_value());
  ReferenceResult ref = ReferenceDown(*h, c.tokens, c.w, 0);
  MatchStats s = Compare(fwd->y, ref);
  std::printf("[down] %s (gate/up %.1f us, down %.1f us)\n", s.Summary().c_str(), fwd->gate_up_us,
              fwd->down_us);
  EXPECT_TRUE(s.AllWithinTolerance()) << s.Summary();
  EXPECT_GE(s.ExactRate(), kMinExactRate) << s.Summary();
}

TEST(GpuMlp, DeviceSeedsMatchHostSeeds) {
  REQUIRE_CUDA_DEVICE();
  MlpShape shape = CustomShape(128, 200);
  auto mlp = GpuMlp::Create(shape, {.max_tokens = 16});
  ASSERT_TRUE(mlp.has_value()) << mlp.error().message();
  ASSERT_TRUE(mlp->GenerateWeights(77).has_value());
  ASSERT_TRUE(mlp->GenerateInput(78, 16).has_value());
  MlpWeights w = MakeSeededWeights(shape, 77, 2);
  std::vector<Bf16> x = MakeSeededActivations(16, shape.hidden, 78);
  ReferenceResult ref = ReferenceGateUp(x, 16, w, 0);
  // The device reference on the device-generated data must equal the host reference bit for bit
  // (values) and agree on the tolerances.
  std::vector<int> rows = {0, 7, 15};
  auto dev_ref = mlp->ReferenceGateUpRows(rows);
  ASSERT_TRUE(dev_ref.has_value()) << dev_ref.error().message();
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int j = 0; j < shape.intermediate; ++j) {
      size_t d = r * shape.intermediate + j;
      size_t h = static_cast<size_t>(rows[r]) * shape.intermediate + j;
      ASSERT_EQ(dev_ref->value[d].bits, ref.value[h].bits) << "row " << rows[r] << " col " << j;
      ASSERT_NEAR(dev_ref->tolerance[d], ref.tolerance[h], 1e-6 * ref.tolerance[h]);
    }
  }
}

TEST(GpuMlp, RejectsBadSizes) {
  REQUIRE_CUDA_DEVICE();
  auto mlp = GpuMlp::Create(CustomShape(64, 64), {.max_tokens = 4});
  ASSERT_TRUE(mlp.has_value()) << mlp.error().message();
  std::vector<Bf16> x(5 * 64);
  auto too_many = mlp->UploadInput(x, 5);
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().code(), junction::ErrorCode::kInvalidArgument);
  MlpWeights wrong = MakeSeededWeights(CustomShape(64, 72), 1, 1);
  auto bad_w = mlp->UploadWeights(wrong);
  ASSERT_FALSE(bad_w.has_value());
  EXPECT_EQ(bad_w.error().code(), junction::ErrorCode::kInvalidArgument);
}

TEST(GpuMlp, UnavailableIsAnErrorNotACrash) {
  // Runs everywhere: without a device Create must fail with kUnavailable and say why.
  auto probe = GpuMlp::Probe(0);
  auto mlp = GpuMlp::Create(kQwen25Shapes[0], {.max_tokens = 8});
  if (probe) {
    EXPECT_TRUE(mlp.has_value()) << mlp.error().message();
    GTEST_SKIP() << "a CUDA device is present (" << probe->name << ")";
  }
  ASSERT_FALSE(mlp.has_value());
  EXPECT_EQ(mlp.error().code(), junction::ErrorCode::kUnavailable);
  EXPECT_FALSE(mlp.error().message().empty());
  std::printf("GpuMlp unavailable here: %s\n", mlp.error().message().c_str());
}

// The function bills a call's GPU joules from NVML's counter around it. Runs everywhere:
// without a GPU, opening the counter must fail with kUnavailable and say why (no figure is
// made up); with one, the counter must advance across a second of fused kernels, by a plausible
// amount (under 1.5 kW·s: no GPU draws more).
TEST(GpuEnergy, CounterAdvancesUnderLoadOrSaysWhyAbsent) {
  auto probe = GpuMlp::Probe(0);
  auto meter = GpuEnergyCounter::Open(probe ? probe->pci_bus_id : "");
  if (!probe) {
    if (meter) return;  // a driver without a usable CUDA device: nothing to load it with
    EXPECT_EQ(meter.error().code(), junction::ErrorCode::kUnavailable);
    EXPECT_FALSE(meter.error().message().empty());
    std::printf("GPU energy counter unavailable here: %s\n", meter.error().message().c_str());
    return;
  }
  ASSERT_TRUE(meter.has_value()) << probe->name << ": " << meter.error().message();
  const MlpShape shape = kQwen25Shapes[3];  // 7B
  auto mlp = GpuMlp::Create(shape, {.max_tokens = 4096});
  ASSERT_TRUE(mlp.has_value()) << mlp.error().message();
  ASSERT_TRUE(mlp->GenerateWeights(1).has_value());
  ASSERT_TRUE(mlp->GenerateInput(2, 4096).has_value());
  const GpuGateUp v = mlp->Supports(GpuGateUp::kFusedSm90Overlap) ? GpuGateUp::kFusedSm90Overlap
                                                                   : GpuGateUp::kUnfusedCublas;
  auto before = meter->ReadMillijoules();
  ASSERT_TRUE(before.has_value()) << before.error().message();
  float us = 0;
  int iters = 0;
  for (; iters < 10000 && us * iters < 1e6; iters += 50) {  // about a second of kernels
    auto t = mlp->TimeGateUp(v, 0, 50);
    ASSERT_TRUE(t.has_value()) << t.error().message();
    us = *t;
  }
  auto after = meter->ReadMillijoules();
  ASSERT_TRUE(after.has_value()) << after.error().message();
  const double joules = static_cast<double>(*after - *before) / 1000.0;
  std::printf("NVML on %s: %.3f J over %d calls of %s at 7B, M = 4096 (%.1f us each)\n",
              probe->name.c_str(), joules, iters, std::string(GpuGateUpName(v)).c_str(), us);
  EXPECT_GT(*after, *before);
  EXPECT_LT(joules, 1500.0);
}

}  // namespace
}  // namespace swiglu
