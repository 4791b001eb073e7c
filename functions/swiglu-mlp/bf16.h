// bf16.h — the bfloat16 storage type and its exact conversions (round-to-nearest-even, NaN kept).
//
// Bf16 is two bytes of storage with no arithmetic: convert to float, compute, convert back once.
// All functions are pure, thread-safe and usable from CUDA device code (SWIGLU_HD).
//
//   Bf16 b = Bf16FromFloat(1.0f / 3.0f);   // 0x3eab, the nearest bf16 (ties to even)
//   float f = Bf16ToFloat(b);              // exact widening
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "functions/swiglu-mlp/hostdevice.h"

namespace swiglu {

// One bfloat16 value: sign, 8 exponent bits, 7 mantissa bits (the top half of an fp32).
struct Bf16 {
  uint16_t bits;
};
static_assert(sizeof(Bf16) == 2, "Bf16 must be two bytes so arrays match the file/device layout");

SWIGLU_HD uint32_t FloatToBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

SWIGLU_HD float BitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// Exact: every bf16 is an fp32.
SWIGLU_HD float Bf16ToFloat(Bf16 b) {
  return BitsToFloat(static_cast<uint32_t>(b.bits) << 16);
}

// Round to nearest, ties to even. Overflow goes to +-inf as IEEE rounding says; NaN stays NaN
// (sign and top payload kept, quiet bit forced so truncation cannot turn it into an infinity).
SWIGLU_HD Bf16 Bf16FromFloat(float f) {
  uint32_t u = FloatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<uint16_t>((u >> 16) | 0x0040u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<uint16_t>(u >> 16)};
}

// Correctly rounded fp64 -> bf16 (no double rounding): round to fp32 with round-to-odd, whose
// 16 extra bits make the second rounding (RNE to bf16) exact, then round to bf16.
SWIGLU_HD Bf16 Bf16FromDouble(double d) {
  float f = static_cast<float>(d);
  uint32_t u = FloatToBits(f);
  if ((u & 0x7fffffffu) < 0x7f800000u && static_cast<double>(f) != d && (u & 1u) == 0) {
    // Inexact and even: replace by the odd neighbour on the truncated side.
    u = (fabs(static_cast<double>(f)) > fabs(d)) ? u - 1u : u + 1u;
    f = BitsToFloat(u);
  }
  return Bf16FromFloat(f);
}

SWIGLU_HD bool Bf16IsNan(Bf16 b) {
  return (b.bits & 0x7fffu) > 0x7f80u;
}
SWIGLU_HD bool Bf16IsInf(Bf16 b) {
  return (b.bits & 0x7fffu) == 0x7f80u;
}

// The spacing of bf16 values at |v| (the weight of the last mantissa bit): 2^(e-7) for normal
// v, 2^-133 for subnormals and zero. For infinities and NaN it returns +inf.
SWIGLU_HD double Bf16Ulp(double v) {
  double a = fabs(v);
  if (!(a <= 1.7976931348623157e308)) return INFINITY;  // inf or NaN
  if (a < 0x1p-126) return 0x1p-133;
  int e;
  frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  return ldexp(1.0, e - 1 - 7);
}

// Position of b on the ordered line of bf16 values (+0 and -0 both map to 0); the difference
// of two positions is their distance in ulps. Undefined for NaN.
inline int Bf16Ordinal(Bf16 b) {
  int mag = b.bits & 0x7fff;
  return (b.bits & 0x8000) ? -mag : mag;
}

}  // namespace swiglu
