// cpu_kernel_internal.h — the dot-product tile kernels behind cpu_kernel.h (scalar and AVX2).
//
// Internal to swiglu_mlp. This header includes nothing but <cstdint> on purpose: the AVX2
// kernel's translation unit is compiled with -mavx2 -mfma, and any inline function or template
// it shared with the rest of the program could be emitted there and picked by the linker for
// every caller, executing AVX2 on CPUs without it. So the AVX2 TU sees plain pointers only, and
// the activation and rounding happen in the baseline TU on the fp32 tiles these kernels return.
#pragma once

#include <cstdint>

namespace swiglu::internal {

// One tile of dot products with fp32 accumulation:
//   out [(m - m0) * ld + (j - j0)] = Σ_k a[m, k] · b [j, k]
//   out2[(m - m0) * ld + (j - j0)] = Σ_k a[m, k] · b2[j, k]   (only when b2 != nullptr)
// for m in [m0, m1), j in [j0, j1). a is fp32 [*, k] row-major; b and b2 are bf16 bit
// patterns [*, k] row-major. With b2 the two weight matrices are read in the same loop as one
// load of each a row (the fused gate/up tile loop).
struct DotTile {
  const float* a = nullptr;
  const uint16_t* b = nullptr;
  const uint16_t* b2 = nullptr;
  int k = 0;
  int m0 = 0, m1 = 0;
  int j0 = 0, j1 = 0;
  int ld = 0;
  float* out = nullptr;
  float* out2 = nullptr;
};

// Portable C++: 8 partial sums per dot in the AVX2 lane order and the same reduction tree.
// Products of two bf16 values are exact in fp32, so an FMA and a multiply-then-add agree and
// DotTileScalar returns the same bits as DotTileAvx2.
void DotTileScalar(const DotTile& t);

// AVX2 + FMA: micro-tiles of up to 4 rows x 2 columns of 8-lane accumulators; call only where
// __builtin_cpu_supports("avx2") and ("fma") hold.
void DotTileAvx2(const DotTile& t);

}  // namespace swiglu::internal
