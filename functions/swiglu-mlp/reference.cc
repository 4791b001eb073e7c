// reference.cc — fp64 reference GEMMs for the SwiGLU MLP, tolerances, and comparisons.
#include "functions/swiglu-mlp/reference.h"

#include <cassert>
#include <cmath>
#include <cstdio>

#include "functions/swiglu-mlp/parallel_for.h"
#include "functions/swiglu-mlp/reference_element.h"
#include "functions/swiglu-mlp/silu.h"

namespace swiglu {
namespace {

// Σ a·b and Σ|a·b| in fp64.
struct Dot {
  double sum = 0;
  double abs_sum = 0;
};

Dot DotWithMagnitude(const Bf16* a, const Bf16* b, int k) {
  Dot d;
  for (int i = 0; i < k; ++i) {
    double p = static_cast<double>(Bf16ToFloat(a[i])) * static_cast<double>(Bf16ToFloat(b[i]));
    d.sum += p;
    d.abs_sum += std::fabs(p);
  }
  return d;
}

}  // namespace

ReferenceResult ReferenceGateUp(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                                int threads) {
  const int k = w.shape.hidden;
  const int n = w.shape.intermediate;
  assert(x.size() == static_cast<size_t>(tokens) * k);
  ReferenceResult r;
  r.value.resize(static_cast<size_t>(tokens) * n);
  r.tolerance.resize(r.value.size());
  ParallelFor(tokens, threads, [&](int64_t m) {
    const Bf16* xr = x.data() + m * k;
    for (int j = 0; j < n; ++j) {
      Dot g = DotWithMagnitude(xr, w.gate.data() + static_cast<size_t>(j) * k, k);
      Dot u = DotWithMagnitude(xr, w.up.data() + static_cast<size_t>(j) * k, k);
      size_t idx = static_cast<size_t>(m) * n + j;
      r.value[idx] = Bf16FromDouble(SiluF64(g.sum) * u.sum);
      r.tolerance[idx] = GateUpTolerance(r.value[idx], g.sum, u.sum, g.abs_sum, u.abs_sum, k);
    }
  });
  return r;
}

ReferenceResult ReferenceDown(std::span<const Bf16> h, int tokens, const MlpWeights& w,
                              int threads) {
  const int k = w.shape.intermediate;
  const int n = w.shape.hidden;
  assert(h.size() == static_cast<size_t>(tokens) * k);
  ReferenceResult r;
  r.value.resize(static_cast<size_t>(tokens) * n);
  r.tolerance.resize(r.value.size());
  ParallelFor(tokens, threads, [&](int64_t m) {
    const Bf16* hr = h.data() + m * k;
    for (int j = 0; j < n; ++j) {
      Dot y = DotWithMagnitude(hr, w.down.data() + static_cast<size_t>(j) * k, k);
      size_t idx = static_cast<size_t>(m) * n + j;
      r.value[idx] = Bf16FromDouble(y.sum);
      r.tolerance[idx] = GemmTolerance(r.value[idx], y.abs_sum, k);
    }
  });
  return r;
}

MatchStats Compare(std::span<const Bf16> actual, const ReferenceResult& ref) {
  assert(actual.size() == ref.value.size());
  MatchStats s;
  s.total = static_cast<int64_t>(actual.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    Bf16 a = actual[i];
    Bf16 e = ref.value[i];
    float af = Bf16ToFloat(a);
    float ef = Bf16ToFloat(e);
    bool a_nan = Bf16IsNan(a), e_nan = Bf16IsNan(e);
    if (a_nan || e_nan) {
      if (a_nan && e_nan) {
        ++s.exact;
        ++s.within_tolerance;
      } else {
        ++s.nonfinite_mismatch;
      }
      continue;
    }
    if (af == ef) {
      ++s.exact;
      ++s.within_tolerance;
      continue;
    }
    if (Bf16IsInf(a) || Bf16IsInf(e)) {
      ++s.nonfinite_mismatch;
      continue;
    }
    double err = std::fabs(static_cast<double>(af) - ef);
    if (err <= ref.tolerance[i]) ++s.within_tolerance;
    double ulps = err / Bf16Ulp(ef);
    if (ulps > s.max_error_ulps) {
      s.max_error_ulps = ulps;
      s.worst_index = static_cast<int64_t>(i);
    }
  }
  return s;
}

std::string MatchStats::Summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%lld elements: exact %.4f%%, within tolerance %.4f%%, non-finite mismatches "
                "%lld, max error %.2f ulp (index %lld)",
                static_cast<long long>(total), 100.0 * ExactRate(),
                total ? 100.0 * within_tolerance / total : 100.0,
                static_cast<long long>(nonfinite_mismatch), max_error_ulps,
                static_cast<long long>(worst_index));
  return buf;
}

}  // namespace swiglu
