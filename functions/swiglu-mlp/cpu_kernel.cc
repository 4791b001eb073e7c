// cpu_kernel.cc — drivers of the CPU SwiGLU kernels: checks, ISA dispatch, tiling, threads,
// the activation on fp32 tiles, and the scalar dot-product tile.
#include "functions/swiglu-mlp/cpu_kernel.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "functions/swiglu-mlp/cpu_kernel_internal.h"
#include "functions/swiglu-mlp/parallel_for.h"
#include "functions/swiglu-mlp/silu.h"

namespace swiglu {
namespace internal {

void DotTileScalar(const DotTile& t) {
  const long k = t.k;
  auto dot = [k](const float* a, const uint16_t* b) {
    float acc[8] = {};
    long i = 0;
    for (; i + 8 <= k; i += 8) {
      for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * Bf16ToFloat(Bf16{b[i + l]});
    }
    float s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    for (; i < k; ++i) s += a[i] * Bf16ToFloat(Bf16{b[i]});
    return s;
  };
  for (int j = t.j0; j < t.j1; ++j) {
    for (int m = t.m0; m < t.m1; ++m) {
      const float* a = t.a + m * k;
      t.out[(m - t.m0) * t.ld + (j - t.j0)] = dot(a, t.b + j * k);
      if (t.b2 != nullptr) t.out2[(m - t.m0) * t.ld + (j - t.j0)] = dot(a, t.b2 + j * k);
    }
  }
}

}  // namespace internal

namespace {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

constexpr int kTileN = 64;

// Per-tile fp32 scratch lives on the heap, not the stack: these kernels run on the caller's
// stack, which in the node is a uthread's (64 KiB by default, less headroom still under ASan),
// and 2 x 64 x 64 floats is 32 KiB. One allocation per tile is noise next to its rows x 64 x k
// multiply-adds.
std::unique_ptr<float[]> TileScratch(int rows, int cols) {
  return std::make_unique_for_overwrite<float[]>(static_cast<size_t>(rows) * cols);
}

// Rows per tile: keep the fp32 X panel (rows x k) within ~256 KiB of L2.
int TileRows(int k) {
  return std::clamp((65536 / std::max(k, 1)) / 4 * 4, 4, 64);
}

Status<CpuIsa> ResolveIsa(CpuIsa isa) {
  if (isa == CpuIsa::kAuto) return DetectCpuIsa();
  if (isa == CpuIsa::kAvx2Fma && DetectCpuIsa() != CpuIsa::kAvx2Fma) {
    return MakeError(ErrorCode::kUnavailable,
                     "the AVX2/FMA CPU kernel was requested but this CPU lacks AVX2 or FMA; use "
                     "CpuIsa::kAuto or kScalar");
  }
  return isa;
}

Status<void> CheckSize(std::string_view what, size_t got, size_t want) {
  if (got == want) return {};
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string(what) + " holds " + std::to_string(got) + " values; expected " +
                       std::to_string(want) + " (tokens x its width for this model shape)");
}

Status<void> CheckWeights(const MlpWeights& w) {
  size_t count = static_cast<size_t>(w.shape.hidden) * w.shape.intermediate;
  if (w.shape.hidden <= 0 || w.shape.intermediate <= 0 || w.gate.size() != count ||
      w.up.size() != count || w.down.size() != count) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "MlpWeights do not match their shape (" + std::to_string(w.shape.hidden) +
                         ", " + std::to_string(w.shape.intermediate) +
                         "); build them with MakeSeededWeights or LoadSafetensorsWeights");
  }
  return {};
}

std::vector<float> ToFloat(std::span<const Bf16> v, int rows, int cols, int threads) {
  std::vector<float> out(v.size());
  ParallelFor(rows, threads, [&](int64_t r) {
    for (int c = 0; c < cols; ++c) out[r * cols + c] = Bf16ToFloat(v[r * cols + c]);
  });
  return out;
}

const uint16_t* Bits(const std::vector<Bf16>& v) {
  return reinterpret_cast<const uint16_t*>(v.data());
}

void RunTile(CpuIsa isa, const internal::DotTile& t) {
  if (isa == CpuIsa::kAvx2Fma) {
    internal::DotTileAvx2(t);
  } else {
    internal::DotTileScalar(t);
  }
}

// Calls fn(m0, m1, n0, n1) for every tile of a [rows, cols] output, in parallel.
template <typename Fn>
void ForEachTile(int rows, int cols, int k, int threads, Fn fn) {
  const int tm = TileRows(k);
  const int row_tiles = (rows + tm - 1) / tm;
  const int col_tiles = (cols + kTileN - 1) / kTileN;
  ParallelFor(static_cast<int64_t>(row_tiles) * col_tiles, threads, [&](int64_t t) {
    int m0 = static_cast<int>(t / col_tiles) * tm;
    int n0 = static_cast<int>(t % col_tiles) * kTileN;
    fn(m0, std::min(m0 + tm, rows), n0, std::min(n0 + kTileN, cols));
  });
}

// C[rows, n] = bf16(A·Bᵀ) for fp32 A [rows, k] and bf16 B [n, k].
void Gemm(CpuIsa isa, int threads, const std::vector<float>& a, int rows, int k,
          const std::vector<Bf16>& b, int n, std::span<Bf16> c) {
  ForEachTile(rows, n, k, threads, [&](int m0, int m1, int n0, int n1) {
    auto acc = TileScratch(m1 - m0, n1 - n0);
    internal::DotTile t;
    t.a = a.data();
    t.b = Bits(b);
    t.k = k;
    t.m0 = m0, t.m1 = m1, t.j0 = n0, t.j1 = n1;
    t.ld = n1 - n0;
    t.out = acc.get();
    RunTile(isa, t);
    for (int m = m0; m < m1; ++m)
      for (int j = n0; j < n1; ++j)
        c[static_cast<size_t>(m) * n + j] = Bf16FromFloat(acc[(m - m0) * t.ld + (j - n0)]);
  });
}

}  // namespace

std::string_view CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAuto:
      return "auto";
    case CpuIsa::kScalar:
      return "scalar";
    case CpuIsa::kAvx2Fma:
      return "avx2+fma";
  }
  return "unknown";
}

CpuIsa DetectCpuIsa() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) return CpuIsa::kAvx2Fma;
#endif
  return CpuIsa::kScalar;
}

Status<void> FusedGateUpCpu(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                            std::span<Bf16> h, const CpuOptions& options) {
  if (auto ok = CheckWeights(w); !ok) return ok;
  const int k = w.shape.hidden, n = w.shape.intermediate;
  if (auto ok = CheckSize("X", x.size(), static_cast<size_t>(tokens) * k); !ok) return ok;
  if (auto ok = CheckSize("H", h.size(), static_cast<size_t>(tokens) * n); !ok) return ok;
  auto isa = ResolveIsa(options.isa);
  if (!isa) return std::unexpected(isa.error());
  const int threads = ResolveThreads(options.threads);
  std::vector<float> xf = ToFloat(x, tokens, k, threads);
  ForEachTile(tokens, n, k, threads, [&](int m0, int m1, int n0, int n1) {
    auto gate = TileScratch(m1 - m0, n1 - n0);
    auto up = TileScratch(m1 - m0, n1 - n0);
    internal::DotTile t;
    t.a = xf.data();
    t.b = Bits(w.gate);
    t.b2 = Bits(w.up);
    t.k = k;
    t.m0 = m0, t.m1 = m1, t.j0 = n0, t.j1 = n1;
    t.ld = n1 - n0;
    t.out = gate.get();
    t.out2 = up.get();
    RunTile(*isa, t);
    for (int m = m0; m < m1; ++m) {
      for (int j = n0; j < n1; ++j) {
        int i = (m - m0) * t.ld + (j - n0);
        h[static_cast<size_t>(m) * n + j] = Bf16FromFloat(SiluMulFast(gate[i], up[i]));
      }
    }
  });
  return {};
}

Status<void> UnfusedGateUpCpu(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                              std::span<Bf16> h, const CpuOptions& options) {
  if (auto ok = CheckWeights(w); !ok) return ok;
  const int k = w.shape.hidden, n = w.shape.intermediate;
  if (auto ok = CheckSize("X", x.size(), static_cast<size_t>(tokens) * k); !ok) return ok;
  if (auto ok = CheckSize("H", h.size(), static_cast<size_t>(tokens) * n); !ok) return ok;
  auto isa = ResolveIsa(options.isa);
  if (!isa) return std::unexpected(isa.error());
  const int threads = ResolveThreads(options.threads);
  std::vector<float> xf = ToFloat(x, tokens, k, threads);
  std::vector<Bf16> g(h.size()), u(h.size());
  Gemm(*isa, threads, xf, tokens, k, w.gate, n, g);
  Gemm(*isa, threads, xf, tokens, k, w.up, n, u);
  ParallelFor(tokens, threads, [&](int64_t m) {
    for (int j = 0; j < n; ++j) {
      size_t i = static_cast<size_t>(m) * n + j;
      h[i] = Bf16FromFloat(SiluMulFast(Bf16ToFloat(g[i]), Bf16ToFloat(u[i])));
    }
  });
  return {};
}

Status<void> DownCpu(std::span<const Bf16> h, int tokens, const MlpWeights& w, std::span<Bf16> y,
                     const CpuOptions& options) {
  if (auto ok = CheckWeights(w); !ok) return ok;
  const int k = w.shape.intermediate, n = w.shape.hidden;
  if (auto ok = CheckSize("H", h.size(), static_cast<size_t>(tokens) * k); !ok) return ok;
  if (auto ok = CheckSize("Y", y.size(), static_cast<size_t>(tokens) * n); !ok) return ok;
  auto isa = ResolveIsa(options.isa);
  if (!isa) return std::unexpected(isa.error());
  const int threads = ResolveThreads(options.threads);
  std::vector<float> hf = ToFloat(h, tokens, k, threads);
  Gemm(*isa, threads, hf, tokens, k, w.down, n, y);
  return {};
}

Status<void> MlpForwardCpu(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                           std::span<Bf16> y, const CpuOptions& options) {
  std::vector<Bf16> h(static_cast<size_t>(tokens) * std::max(w.shape.intermediate, 0));
  if (auto ok = FusedGateUpCpu(x, tokens, w, h, options); !ok) return ok;
  return DownCpu(h, tokens, w, y, options);
}

}  // namespace swiglu
