// reference.h — the fp64 CPU reference of the SwiGLU MLP, its error bounds, and comparisons.
//
// ReferenceGateUp computes H = bf16(SiLU(X·Wgᵀ) ⊙ (X·Wuᵀ)) with fp64 accumulation on the bf16
// inputs, the activation in fp64 and one rounding (reference_element.h); ReferenceDown
// computes Y = bf16(H·Wdᵀ) the same way from a given H. Each element also gets a tolerance:
//
//   tol = ulp_bf16(ref) + noise
//   gate/up:  noise = γ(K)·( |SiLU'(g)·u|·Σ|x·wg| + |SiLU(g)|·Σ|x·wu| ) + 2^-20·|h|
//   down:     noise = γ(N)·Σ|h·wd|
//   γ(K) = K·2^-23
//
// γ(K)·Σ|a·b| bounds the error of any fp32 summation order of K products (the classical
// K·u·Σ|a·b| bound with u = 2^-24, doubled to cover tensor-core adders that truncate rather
// than round); it is pushed through the activation by its partial derivatives. 2^-20·|h|
// covers the fp32 activation (fast exp < 2e-7 relative, then a divide and a multiply). Typical
// errors are far smaller (about sqrt(K)·2^-24·Σ|a·b|): the tolerance catches broken kernels,
// the exact-match rate measures the numerics.
//
// All functions are thread-safe and block until done; `threads` as in ParallelFor.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/weights.h"

namespace swiglu {

struct ReferenceResult {
  std::vector<Bf16> value;       // the exact result rounded once to bf16, row-major
  std::vector<float> tolerance;  // per element: ulp_bf16(value) + noise (see above)
};

// H[tokens, intermediate] for X[tokens, hidden]. Sizes must match w.shape (checked by assert).
ReferenceResult ReferenceGateUp(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                                int threads = 0);

// Y[tokens, hidden] for a given H[tokens, intermediate].
ReferenceResult ReferenceDown(std::span<const Bf16> h, int tokens, const MlpWeights& w,
                              int threads = 0);

// How `actual` agrees with a reference, element by element.
struct MatchStats {
  int64_t total = 0;
  int64_t exact = 0;               // same value (NaN matches NaN; +0 matches -0)
  int64_t within_tolerance = 0;    // exact, or finite and |actual - ref| <= tolerance
  int64_t nonfinite_mismatch = 0;  // NaN/inf on one side only, or infinities that differ
  double max_error_ulps = 0;       // max |actual - ref| / ulp_bf16(ref) over finite pairs
  int64_t worst_index = -1;        // where max_error_ulps was seen
  double ExactRate() const { return total ? static_cast<double>(exact) / total : 1.0; }
  bool AllWithinTolerance() const { return within_tolerance == total; }
  std::string Summary() const;  // one line for logs and test output
};

MatchStats Compare(std::span<const Bf16> actual, const ReferenceResult& ref);

}  // namespace swiglu
