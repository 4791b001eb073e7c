// reference_element.h — one element of the fp64 SwiGLU reference, shared by host and device.
//
// h = bf16( SiluF64(sum_k x_k*wg_k) * (sum_k x_k*wu_k) ): the products of bf16 inputs are exact
// in fp64 and summed in fp64 in k order; the activation is applied in fp64 and the result is
// rounded to bf16 once (Bf16FromDouble, no double rounding). The tolerance functions implement
// the bound documented in reference.h. Pure, thread-safe, device-usable.
#pragma once

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/hostdevice.h"
#include "functions/swiglu-mlp/silu.h"

namespace swiglu {

SWIGLU_HD double DotBf16F64(const Bf16* a, const Bf16* b, int k) {
  double s = 0.0;
  for (int i = 0; i < k; ++i) {
    s += static_cast<double>(Bf16ToFloat(a[i])) * static_cast<double>(Bf16ToFloat(b[i]));
  }
  return s;
}

SWIGLU_HD Bf16 ReferenceGateUpElement(const Bf16* x_row, const Bf16* wg_row, const Bf16* wu_row,
                                      int k) {
  double g = DotBf16F64(x_row, wg_row, k);
  double u = DotBf16F64(x_row, wu_row, k);
  return Bf16FromDouble(SiluF64(g) * u);
}

// γ(K) = K·2^-23: twice the classical K·u bound on any fp32 summation order of K products.
SWIGLU_HD double AccumulationGamma(int k) {
  return static_cast<double>(k) * 0x1p-23;
}

// |actual - value| allowed for h = SiLU(g)·u with Σ|x·wg| = g_abs, Σ|x·wu| = u_abs over k terms.
SWIGLU_HD float GateUpTolerance(Bf16 value, double g, double u, double g_abs, double u_abs, int k) {
  double silu = SiluF64(g);
  double noise =
      AccumulationGamma(k) * (fabs(SiluDerivativeF64(g) * u) * g_abs + fabs(silu) * u_abs) +
      0x1p-20 * fabs(silu * u);
  double t = Bf16Ulp(Bf16ToFloat(value)) + noise;
  return (t <= 3.4e38) ? static_cast<float>(t) : INFINITY;
}

// |actual - value| allowed for y = Σ h·wd over k terms with Σ|h·wd| = abs_sum.
SWIGLU_HD float GemmTolerance(Bf16 value, double abs_sum, int k) {
  double t = Bf16Ulp(Bf16ToFloat(value)) + AccumulationGamma(k) * abs_sum;
  return (t <= 3.4e38) ? static_cast<float>(t) : INFINITY;
}

}  // namespace swiglu
