// swiglu_cpu_test.cc — CPU SwiGLU: bf16 and SiLU numerics, seeded weights, and the fast kernels
// (AVX2 and scalar, fused and unfused) against the fp64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/cpu_kernel.h"
#include "functions/swiglu-mlp/prng.h"
#include "functions/swiglu-mlp/reference.h"
#include "functions/swiglu-mlp/shapes.h"
#include "functions/swiglu-mlp/silu.h"
#include "functions/swiglu-mlp/weights.h"

namespace swiglu {
namespace {

constexpr double kMinExactRate = 0.995;

Bf16 B(float f) {
  return Bf16FromFloat(f);
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(B(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(B(1.0f + 0x1p-8f).bits, 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even): rounds up.
  EXPECT_EQ(B(1.0f + 3 * 0x1p-8f).bits, 0x3f82);
  EXPECT_EQ(B(1.0f + 0x1p-8f + 0x1p-20f).bits, 0x3f81);  // just above half: up
  EXPECT_EQ(B(-2.5f).bits, 0xc020);
  EXPECT_EQ(B(std::numeric_limits<float>::max()).bits, 0x7f80);  // overflows to +inf
  EXPECT_EQ(B(INFINITY).bits, 0x7f80);
  EXPECT_EQ(B(-INFINITY).bits, 0xff80);
  EXPECT_EQ(B(0x1p-140f).bits, 0x0000);  // below half the smallest bf16 subnormal
  EXPECT_EQ(B(-0.0f).bits, 0x8000);
}

TEST(Bf16, KeepsNaN) {
  // A NaN whose payload lives only in the low 16 bits must not truncate to an infinity.
  float nan_low = BitsToFloat(0x7f800001u);
  ASSERT_TRUE(std::isnan(nan_low));
  EXPECT_TRUE(Bf16IsNan(B(nan_low)));
  EXPECT_TRUE(Bf16IsNan(B(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(B(-std::numeric_limits<float>::quiet_NaN()).bits & 0x8000, 0x8000);
  EXPECT_TRUE(Bf16IsNan(Bf16FromDouble(std::nan(""))));
}

TEST(Bf16, FromDoubleRoundsOnce) {
  // 1 + 2^-8 + 2^-40 is above the tie; rounding to fp32 first (RNE) would lose 2^-40 and tie
  // down to 1.0. Correct rounding goes up.
  EXPECT_EQ(Bf16FromDouble(1.0 + 0x1p-8 + 0x1p-40).bits, 0x3f81);
  EXPECT_EQ(Bf16FromDouble(1.0 + 0x1p-8 - 0x1p-40).bits, 0x3f80);
  EXPECT_EQ(Bf16FromDouble(1.0 + 0x1p-8).bits, 0x3f80);  // exact tie: even
  // Brute force against the definition: the nearest of the two neighbours.
  uint64_t key = StreamKey(7, 99);
  for (int i = 0; i < 20000; ++i) {
    double d = std::ldexp(1.0 + (SplitMix64(key + i) >> 11) * 0x1p-53, i % 200 - 100);
    if (i % 2) d = -d;
    Bf16 r = Bf16FromDouble(d);
    double got = Bf16ToFloat(r);
    double ulp = Bf16Ulp(got);
    ASSERT_LE(std::fabs(got - d), ulp / 2) << d;
  }
}

TEST(Silu, NoNaNForLargeGateAndCorrectLimits) {
  for (float x : {88.5f, 89.0f, 100.0f, 1e4f, 3e38f}) {
    EXPECT_EQ(SiluFast(x), x) << x;
  }
  for (float x : {-88.5f, -89.0f, -100.0f, -1e4f, -3e38f}) {
    float s = SiluFast(x);
    EXPECT_FALSE(std::isnan(s)) << x;
    EXPECT_LE(s, 0.0f) << x;
    EXPECT_GT(s, -1e-30f) << x;
  }
  EXPECT_TRUE(std::isnan(SiluFast(std::nanf(""))));
  EXPECT_EQ(SiluFast(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(SiluFast(-INFINITY)));  // -inf * sigmoid(-inf) = -inf * 0
  EXPECT_TRUE(std::isnan(SiluF64(-INFINITY)));
  EXPECT_EQ(SiluF64(INFINITY), INFINITY);
}

TEST(Silu, FastMatchesFp64) {
  // Relative error of the fp32 SiLU (2^-20 is the budget in reference.h's tolerance); where the
  // result is subnormal in fp32, e^-|x| itself underflows first (below 2^-149), so the error is
  // up to |x| * 2^-150 < 2^-142: 9 binades below the smallest bf16 subnormal (2^-133).
  double worst = 0;
  for (int i = -200000; i <= 200000; ++i) {
    float x = i * 0.0006f;  // [-120, 120]
    double want = SiluF64(x);
    double got = SiluFast(x);
    double err = std::fabs(got - want);
    if (std::fabs(want) > 0x1p-126) {
      worst = std::max(worst, err / std::fabs(want));
    } else {
      ASSERT_LE(err, 0x1p-142) << x;
    }
  }
  EXPECT_LT(worst, 0x1p-20);
  std::printf("SiluFast max relative error over [-120, 120]: %.3g\n", worst);
}

// SiluFast as it was written before 2026-12-04 (two branches, two divisions, a float-to-int
// conversion). The one-division form in silu.h must give the same bits: the kernels' outputs
// did not change (checked for all 2^32 inputs once on the host and once on an H200, sm_90a).
float SiluFastTwoBranch(float x) {
  float a = fminf(fmaxf(-fabsf(x), -150.0f), 0.0f);
  float n = fmaf(a, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
  float r = fmaf(-n, 0.693359375f, a);
  r = fmaf(-n, -2.12194440e-4f, r);
  float z = r * r;
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  p = fmaf(p, z, r + 1.0f);
  int ni = static_cast<int>(n);
  int n1 = ni / 2;
  int n2 = ni - n1;
  float hi = p * BitsToFloat(static_cast<uint32_t>(n1 + 127) << 23);
  float scale = BitsToFloat(static_cast<uint32_t>(n2 + 127) << 23);
  float t = hi * scale;
  if (x >= 0.0f) return x / (1.0f + t);
  float q = ((x * hi) / (1.0f + t)) * scale;
  return (x < -150.0f) ? x * 0.0f : q;
}

TEST(Silu, OneDivisionFormMatchesTwoBranchForm) {
  // Every 1024th fp32 bit pattern (both signs, NaNs, infinities, subnormals), and one more.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 1024) {
    for (uint32_t bits : {static_cast<uint32_t>(b), static_cast<uint32_t>(b + 513)}) {
      float x = BitsToFloat(bits);
      ASSERT_EQ(FloatToBits(SiluFast(x)), FloatToBits(SiluFastTwoBranch(x))) << std::hex << bits;
    }
  }
}

TEST(Shapes, QwenSizes) {
  auto s = QwenShape("72B");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->hidden, 8192);
  EXPECT_EQ(s->intermediate, 29568);
  EXPECT_NE(s->intermediate % 256, 0);  // the tail case the kernels must handle
  auto small = QwenShape("qwen2.5-0.5b");
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->hidden, 896);
  EXPECT_EQ(small->intermediate, 4864);
  auto bad = QwenShape("13B");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), junction::ErrorCode::kNotFound);
  EXPECT_NE(bad.error().message().find("0.5B"), std::string::npos);
}

TEST(SeededWeights, DeterministicAndRealistic) {
  MlpShape shape = CustomShape(256, 320);
  MlpWeights a = MakeSeededWeights(shape, 42, 1);
  MlpWeights b = MakeSeededWeights(shape, 42, 3);  // thread count must not matter
  MlpWeights c = MakeSeededWeights(shape, 43, 1);
  ASSERT_EQ(a.gate.size(), 256u * 320u);
  EXPECT_EQ(0, std::memcmp(a.gate.data(), b.gate.data(), a.gate.size() * 2));
  EXPECT_EQ(0, std::memcmp(a.down.data(), b.down.data(), a.down.size() * 2));
  EXPECT_NE(0, std::memcmp(a.gate.data(), c.gate.data(), a.gate.size() * 2));
  EXPECT_NE(0, std::memcmp(a.gate.data(), a.up.data(), a.gate.size() * 2));
  double sum = 0, sq = 0, max_abs = 0;
  for (Bf16 v : a.gate) {
    double f = Bf16ToFloat(v);
    sum += f;
    sq += f * f;
    max_abs = std::max(max_abs, std::fabs(f));
  }
  double mean = sum / a.gate.size();
  double sd = std::sqrt(sq / a.gate.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_NEAR(sd, 0.02, 0.001);
  EXPECT_LT(max_abs, 0.0694);  // Irwin-Hall(4) is bounded by sqrt(3)*2*0.02
  // The generator is a file format: pin its first values (seed 42, gate stream).
  std::vector<uint16_t> first;
  for (int i = 0; i < 4; ++i) first.push_back(a.gate[i].bits);
  std::printf("seed 42 gate[0..3] = %04x %04x %04x %04x\n", first[0], first[1], first[2], first[3]);
  EXPECT_EQ(first, (std::vector<uint16_t>{0xbab6, 0xbc92, 0x3c03, 0xbd0c}));
}

// --- the fast kernels against the reference -------------------------------------------------

struct KernelCase {
  MlpShape shape;
  int tokens;
};

MatchStats RunFused(const std::vector<Bf16>& x, int tokens, const MlpWeights& w, CpuIsa isa,
                    const ReferenceResult& ref, int threads = 2) {
  std::vector<Bf16> h(ref.value.size());
  auto ok = FusedGateUpCpu(x, tokens, w, h, {.threads = threads, .isa = isa});
  EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().message());
  return Compare(h, ref);
}

MatchStats RunUnfused(const std::vector<Bf16>& x, int tokens, const MlpWeights& w, CpuIsa isa,
                      const ReferenceResult& ref) {
  std::vector<Bf16> h(ref.value.size());
  auto ok = UnfusedGateUpCpu(x, tokens, w, h, {.threads = 2, .isa = isa});
  EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().message());
  return Compare(h, ref);
}

std::vector<CpuIsa> IsasHere() {
  std::vector<CpuIsa> v = {CpuIsa::kScalar};
  if (DetectCpuIsa() == CpuIsa::kAvx2Fma) v.push_back(CpuIsa::kAvx2Fma);
  return v;
}

void CheckFusedAgainstReference(const MlpShape& shape, int tokens, uint64_t seed) {
  MlpWeights w = MakeSeededWeights(shape, seed, 2);
  std::vector<Bf16> x = MakeSeededActivations(tokens, shape.hidden, seed + 1);
  ReferenceResult ref = ReferenceGateUp(x, tokens, w, 2);
  for (CpuIsa isa : IsasHere()) {
    SCOPED_TRACE(std::string(CpuIsaName(isa)));
    MatchStats fused = RunFused(x, tokens, w, isa, ref);
    MatchStats unfused = RunUnfused(x, tokens, w, isa, ref);
    std::printf("[%s M=%d K=%d N=%d] fused:   %s\n", std::string(CpuIsaName(isa)).c_str(), tokens,
                shape.hidden, shape.intermediate, fused.Summary().c_str());
    std::printf("[%s M=%d K=%d N=%d] unfused: %s\n", std::string(CpuIsaName(isa)).c_str(), tokens,
                shape.hidden, shape.intermediate, unfused.Summary().c_str());
    EXPECT_TRUE(fused.AllWithinTolerance()) << fused.Summary();
    EXPECT_EQ(fused.nonfinite_mismatch, 0);
    EXPECT_GE(fused.ExactRate(), kMinExactRate) << fused.Summary();
    // Rounding gate and up to bf16 before the activation costs most of the exact matches.
    EXPECT_LT(unfused.ExactRate(), fused.ExactRate() - 0.2) << unfused.Summary();
  }
}

TEST(FusedCpu, Qwen05BFullWidth) {
  // K = 896 and the full intermediate width of Qwen2.5-0.5B; 70 tokens span two row tiles.
  CheckFusedAgainstReference(kQwen25Shapes[0], 70, 1);
}

TEST(FusedCpu, RowAndColumnTails) {
  // 37 tokens: not a multiple of the 4-row micro-tile nor of the row tile; N = 200: not a
  // multiple of the 64-column tile nor of 8.
  CheckFusedAgainstReference(CustomShape(896, 200), 37, 2);
}

TEST(FusedCpu, KTail) {
  // K not a multiple of the 8-wide vectors.
  CheckFusedAgainstReference(CustomShape(903, 130), 9, 3);
}

TEST(FusedCpu, GateNearPlusMinus100) {
  // Gate pre-activations swept over +-[80, 120]: the exp in SiLU leaves the fp32 range there.
  const int k = 896, n = 256, tokens = 8;
  MlpShape shape = CustomShape(k, n);
  MlpWeights w = MakeSeededWeights(shape, 5, 2);
  std::vector<Bf16> x(static_cast<size_t>(tokens) * k);
  uint64_t key = StreamKey(5, 77);
  for (size_t i = 0; i < x.size(); ++i) x[i] = B(1.0f + 0.05f * SeededValue(key, i, 1.0f));
  for (int j = 0; j < n; ++j) {
    float target = (j % 2 ? -1.0f : 1.0f) * (80.0f + 40.0f * (j / 2) / (n / 2));
    for (int i = 0; i < k; ++i) w.gate[static_cast<size_t>(j) * k + i] = B(target / k);
  }
  ReferenceResult ref = ReferenceGateUp(x, tokens, w, 2);
  int tiny = 0;
  for (Bf16 v : ref.value) tiny += (std::fabs(Bf16ToFloat(v)) < 1e-30f);
  EXPECT_GT(tiny, 0);  // the negative side really reaches SiLU ~ 0
  for (CpuIsa isa : IsasHere()) {
    SCOPED_TRACE(std::string(CpuIsaName(isa)));
    std::vector<Bf16> h(ref.value.size());
    ASSERT_TRUE(FusedGateUpCpu(x, tokens, w, h, {.threads = 2, .isa = isa}).has_value());
    for (Bf16 v : h) ASSERT_FALSE(Bf16IsNan(v));
    MatchStats s = Compare(h, ref);
    std::printf("[%s gate ~ +-100] fused: %s\n", std::string(CpuIsaName(isa)).c_str(),
                s.Summary().c_str());
    EXPECT_TRUE(s.AllWithinTolerance()) << s.Summary();
    EXPECT_GE(s.ExactRate(), kMinExactRate) << s.Summary();
  }
}

TEST(FusedCpu, NaNAndInfPropagate) {
  const int k = 64, n = 72, tokens = 4;
  MlpShape shape = CustomShape(k, n);
  MlpWeights w = MakeSeededWeights(shape, 9, 1);
  std::vector<Bf16> x = MakeSeededActivations(tokens, k, 10);
  x[0 * k + 5] = B(std::nanf(""));  // row 0: every gate and up is NaN
  x[1 * k + 7] = B(INFINITY);       // row 1: gate, up = +-inf by the weight's sign
  x[2 * k + 3] = B(-INFINITY);
  ReferenceResult ref = ReferenceGateUp(x, tokens, w, 1);
  int nan_count = 0, inf_count = 0;
  for (int j = 0; j < n; ++j) {
    EXPECT_TRUE(Bf16IsNan(ref.value[j]));
    nan_count += Bf16IsNan(ref.value[n + j]) + Bf16IsNan(ref.value[2 * n + j]);
    inf_count += Bf16IsInf(ref.value[n + j]) + Bf16IsInf(ref.value[2 * n + j]);
  }
  EXPECT_GT(nan_count, 0);  // silu(-inf) * inf
  EXPECT_GT(inf_count, 0);  // silu(+inf) * +-inf
  for (CpuIsa isa : IsasHere()) {
    SCOPED_TRACE(std::string(CpuIsaName(isa)));
    std::vector<Bf16> h(ref.value.size());
    ASSERT_TRUE(FusedGateUpCpu(x, tokens, w, h, {.threads = 1, .isa = isa}).has_value());
    MatchStats s = Compare(h, ref);
    EXPECT_EQ(s.nonfinite_mismatch, 0) << s.Summary();
    EXPECT_TRUE(s.AllWithinTolerance()) << s.Summary();
    for (int j = 0; j < n; ++j) EXPECT_FALSE(Bf16IsNan(h[3 * n + j]) || Bf16IsInf(h[3 * n + j]));
  }
}

TEST(FusedCpu, ThreadCountDoesNotChangeBits) {
  MlpShape shape = CustomShape(320, 300);
  MlpWeights w = MakeSeededWeights(shape, 11, 2);
  std::vector<Bf16> x = MakeSeededActivations(70, shape.hidden, 12);
  std::vector<Bf16> h1(70 * 300), h3(70 * 300);
  ASSERT_TRUE(FusedGateUpCpu(x, 70, w, h1, {.threads = 1}).has_value());
  ASSERT_TRUE(FusedGateUpCpu(x, 70, w, h3, {.threads = 3}).has_value());
  EXPECT_EQ(0, std::memcmp(h1.data(), h3.data(), h1.size() * 2));
}

TEST(FusedCpu, ScalarAndAvx2AreBitIdentical) {
  // bf16 x bf16 products are exact in fp32 and the scalar kernel sums in the AVX2 lane order,
  // so the two ISAs must agree bit for bit (the activation is shared code).
  if (DetectCpuIsa() != CpuIsa::kAvx2Fma) GTEST_SKIP() << "this CPU has no AVX2/FMA";
  MlpShape shape = CustomShape(903, 150);
  MlpWeights w = MakeSeededWeights(shape, 15, 2);
  std::vector<Bf16> x = MakeSeededActivations(23, shape.hidden, 16);
  std::vector<Bf16> a(23 * 150), b(23 * 150), y1(23 * 903), y2(23 * 903);
  ASSERT_TRUE(FusedGateUpCpu(x, 23, w, a, {.threads = 2, .isa = CpuIsa::kScalar}).has_value());
  ASSERT_TRUE(FusedGateUpCpu(x, 23, w, b, {.threads = 2, .isa = CpuIsa::kAvx2Fma}).has_value());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * 2));
  ASSERT_TRUE(DownCpu(a, 23, w, y1, {.threads = 2, .isa = CpuIsa::kScalar}).has_value());
  ASSERT_TRUE(DownCpu(a, 23, w, y2, {.threads = 2, .isa = CpuIsa::kAvx2Fma}).has_value());
  EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * 2));
}

TEST(DownCpu, MatchesReference) {
  MlpShape shape = CustomShape(200, 4864 / 4);  // K of the down GEMM = 1216
  MlpWeights w = MakeSeededWeights(shape, 13, 2);
  const int tokens = 11;
  std::vector<Bf16> x = MakeSeededActivations(tokens, shape.hidden, 14);
  std::vector<Bf16> h(static_cast<size_t>(tokens) * shape.intermediate);
  ASSERT_TRUE(FusedGateUpCpu(x, tokens, w, h, {.threads = 2}).has_value());
  ReferenceResult ref = ReferenceDown(h, tokens, w, 2);
  for (CpuIsa isa : IsasHere()) {
    SCOPED_TRACE(std::string(CpuIsaName(isa)));
    std::vector<Bf16> y(ref.value.size());
    ASSERT_TRUE(DownCpu(h, tokens, w, y, {.threads = 2, .isa = isa}).has_value());
    MatchStats s = Compare(y, ref);
    std::printf("[%s down] %s\n", std::string(CpuIsaName(isa)).c_str(), s.Summary().c_str());
    EXPECT_TRUE(s.AllWithinTolerance()) << s.Summary();
    EXPECT_GE(s.ExactRate(), kMinExactRate) << s.Summary();
  }
  std::vector<Bf16> y(ref.value.size());
  ASSERT_TRUE(MlpForwardCpu(x, tokens, w, y, {.threads = 2}).has_value());
  std::vector<Bf16> y2(ref.value.size());
  ASSERT_TRUE(DownCpu(h, tokens, w, y2, {.threads = 2}).has_value());
  EXPECT_EQ(0, std::memcmp(y.data(), y2.data(), y.size() * 2));
}

TEST(FusedCpu, RejectsWrongSizes) {
  MlpShape shape = CustomShape(64, 64);
  MlpWeights w = MakeSeededWeights(shape, 1, 1);
  std::vector<Bf16> x(3 * 64), h(3 * 64);
  auto bad_x = FusedGateUpCpu(std::span<const Bf16>(x).first(100), 3, w, h);
  ASSERT_FALSE(bad_x.has_value());
  EXPECT_EQ(bad_x.error().code(), junction::ErrorCode::kInvalidArgument);
  auto bad_h = UnfusedGateUpCpu(x, 3, w, std::span<Bf16>(h).first(10));
  ASSERT_FALSE(bad_h.has_value());
  w.up.pop_back();
  auto bad_w = FusedGateUpCpu(x, 3, w, h);
  ASSERT_FALSE(bad_w.has_value());
  EXPECT_EQ(bad_w.error().code(), junction::ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace swiglu
