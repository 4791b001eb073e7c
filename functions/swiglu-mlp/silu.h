// silu.h — SiLU (x * sigmoid(x)) in fp32 with a fast exp, and the fp64 SiLU the reference uses.
//
// Shared by the CPU kernels and the CUDA kernels so every fused path, host or device, applies
// bit-identical activation arithmetic to its fp32 accumulators. Pure functions, thread-safe,
// device-usable.
//
// Numerics (fp32 path):
//   t = e^-|x| = hi * 2^j from FastExpNonPositiveSplit (relative error < 2e-7);
//   SiluFast(x) = x / (1 + t)                 for x >= 0
//               = ((x * hi) / (1 + t)) * 2^j  for x < 0 and NaN (one rounding into subnormals)
//   so nothing overflows: for x > 88 the result goes to x, for x < -88 it goes smoothly to -0
//   through the subnormals (no inf/inf, no NaN for finite x). IEEE propagation for non-finite
//   x, as evaluating x * sigmoid(x) in IEEE arithmetic gives: NaN -> NaN, +inf -> +inf,
//   -inf -> NaN (-inf * 0).
//   SiluMulFast(g, u) = SiluFast(g) * u: two roundings in fp32, then the caller rounds to bf16
//   once.
#pragma once

#include <cmath>
#include <cstdint>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/hostdevice.h"

namespace swiglu {

// e^a for a <= 0, returned as hi * scale with hi normal and scale a power of two, so callers
// can multiply by hi first and round into the fp32 subnormals once, at the end. a is clamped to
// [-150, 0] (NaN becomes -150; callers carry NaN through their own operands). Cody-Waite range
// reduction with n = round(a*log2 e), the Cephes expf minimax polynomial on [-ln2/2, ln2/2]
// (relative error < 2e-7), and 2^n split as 2^n1 * 2^n2 with both halves normal.
SWIGLU_HD void FastExpNonPositiveSplit(float a, float* hi, float* scale) {
  a = fmaxf(a, -150.0f);
  a = fminf(a, 0.0f);
  // Every multiply-add is an explicit fmaf, so host (libm/FMA3) and device (FFMA) round alike
  // whatever contraction flags the compilers use.
  // y = 1.5 * 2^23 + n exactly (one unit per ulp there), so n = y - 1.5 * 2^23 exactly and the
  // integer n is the low bits of y: no float-to-int conversion needed.
  const float y = fmaf(a, 1.44269504088896341f, 12582912.0f);
  float n = y - 12582912.0f;
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
  int ni = static_cast<int>(FloatToBits(y)) - 0x4B400000;  // == (int)n, in [-217, 0]
  int n1 = ni / 2;               // both halves >= -109: normal powers of two
  int n2 = ni - n1;
  *hi = p * BitsToFloat(static_cast<uint32_t>(n1 + 127) << 23);
  *scale = BitsToFloat(static_cast<uint32_t>(n2 + 127) << 23);
}

SWIGLU_HD float FastExpNonPositive(float a) {
  float hi, scale;
  FastExpNonPositiveSplit(a, &hi, &scale);
  return hi * scale;
}

SWIGLU_HD float SiluFast(float x) {
  float hi, scale;
  FastExpNonPositiveSplit(-fabsf(x), &hi, &scale);
  float t = hi * scale;  // e^-|x|
  // x >= 0: x / (1 + t). Otherwise x * e^x / (1 + e^x) with the small power of two applied
  // last: one rounding into the subnormals. Below -150 (where the exp argument was clamped) the
  // true value is below 2^-200: return x * 0, which is -0, or NaN for -inf as IEEE evaluation
  // of x * sigmoid(x) gives. Both cases share one division (selects, not branches: on a GPU a
  // warp with gates of both signs would otherwise run both divisions); the operations on each
  // path are exactly those of the two-branch form.
  const bool pos = x >= 0.0f;
  float q = (pos ? x : x * hi) / (1.0f + t);
  float s = pos ? q : q * scale;
  return (x < -150.0f) ? x * 0.0f : s;
}

SWIGLU_HD float SiluMulFast(float g, float u) {
  return SiluFast(g) * u;
}

// The fp64 SiLU of the reference, written the same overflow-free way: x/(1+e^-x) for x >= 0,
// x*e^x/(1+e^x) for x < 0. NaN -> NaN, +inf -> +inf, -inf -> NaN, as SiluFast.
SWIGLU_HD double SiluF64(double x) {
  if (x != x) return x;
  if (x >= 0.0) return x / (1.0 + exp(-x));
  double e = exp(x);
  return (x * e) / (1.0 + e);
}

// The derivative of SiLU, for error-propagation bounds: sigmoid(x) * (1 + x * (1 - sigmoid(x))).
SWIGLU_HD double SiluDerivativeF64(double x) {
  if (x != x) return 0.0;
  if (x > 700.0) return 1.0;
  if (x < -700.0) return 0.0;
  double s = (x >= 0.0) ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
  return s * (1.0 + x * (1.0 - s));
}

}  // namespace swiglu
