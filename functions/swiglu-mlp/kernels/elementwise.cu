// elementwise.cu — the unfused baseline's SiLU·mul kernel, seeded fills, and the fp64
// reference on sampled rows.
#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/kernels/launch.h"
#include "functions/swiglu-mlp/prng.h"
#include "functions/swiglu-mlp/reference_element.h"
#include "functions/swiglu-mlp/silu.h"

namespace swiglu::cuda {
namespace {

__device__ __forceinline__ Bf16 Load(const __nv_bfloat16* p) {
  return Bf16{__bfloat16_as_ushort(*p)};
}
__device__ __forceinline__ void Store(__nv_bfloat16* p, Bf16 v) {
  *p = __ushort_as_bfloat16(v.bits);
}

__global__ void SiluMulKernel(const __nv_bfloat16* g, const __nv_bfloat16* u, __nv_bfloat16* h,
                              int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float gf = Bf16ToFloat(Load(g + i));
    float uf = Bf16ToFloat(Load(u + i));
    Store(h + i, Bf16FromFloat(SiluMulFast(gf, uf)));
  }
}

__global__ void SeededFillKernel(__nv_bfloat16* dst, int64_t count, uint64_t key, float std_dev) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Store(dst + i, SeededBf16(key, static_cast<uint64_t>(i), std_dev));
  }
}

constexpr int kRefRowsPerPass = 8;

// One thread per output column j; up to 8 rows per pass so each weight row is read once.
// Also Σ|x·w| per element, for the tolerance of reference.h (GateUpTolerance).
__global__ void ReferenceRowsKernel(const __nv_bfloat16* x, const __nv_bfloat16* wg,
                                    const __nv_bfloat16* wu, int n, int k, const int* rows,
                                    int num_rows, __nv_bfloat16* out, float* tolerance) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const Bf16* wgr = reinterpret_cast<const Bf16*>(wg) + static_cast<size_t>(j) * k;
  const Bf16* wur = reinterpret_cast<const Bf16*>(wu) + static_cast<size_t>(j) * k;
  for (int r0 = 0; r0 < num_rows; r0 += kRefRowsPerPass) {
    const int count = min(kRefRowsPerPass, num_rows - r0);
    double g[kRefRowsPerPass] = {}, u[kRefRowsPerPass] = {};
    double g_abs[kRefRowsPerPass] = {}, u_abs[kRefRowsPerPass] = {};
    for (int i = 0; i < k; ++i) {
      double a = Bf16ToFloat(wgr[i]);
      double b = Bf16ToFloat(wur[i]);
#pragma unroll
      for (int r = 0; r < kRefRowsPerPass; ++r) {
        if (r < count) {
          const Bf16* xr = reinterpret_cast<const Bf16*>(x) + static_cast<size_t>(rows[r0 + r]) * k;
          double xv = Bf16ToFloat(xr[i]);
          // Products of bf16 values are exact in fp64, so a contracted FMA sums the same bits as
          // the host's multiply-then-add (DotBf16F64).
          double pg = xv * a, pu = xv * b;
          g[r] += pg;
          u[r] += pu;
          g_abs[r] += fabs(pg);
          u_abs[r] += fabs(pu);
        }
      }
    }
    for (int r = 0; r < count; ++r) {
      const size_t idx = static_cast<size_t>(r0 + r) * n + j;
      const Bf16 h = Bf16FromDouble(SiluF64(g[r]) * u[r]);
      Store(out + idx, h);
      tolerance[idx] = GateUpTolerance(h, g[r], u[r], g_abs[r], u_abs[r], k);
    }
  }
}

int GridFor(int64_t count, int threads) {
  int64_t blocks = (count + threads - 1) / threads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

cudaError_t LaunchSiluMul(const __nv_bfloat16* g, const __nv_bfloat16* u, __nv_bfloat16* h,
                          int64_t count, cudaStream_t stream) {
  SiluMulKernel<<<GridFor(count, 256), 256, 0, stream>>>(g, u, h, count);
  return cudaGetLastError();
}

cudaError_t LaunchSeededFill(__nv_bfloat16* dst, int64_t count, uint64_t key, float std_dev,
                             cudaStream_t stream) {
  SeededFillKernel<<<GridFor(count, 256), 256, 0, stream>>>(dst, count, key, std_dev);
  return cudaGetLastError();
}

cudaError_t LaunchReferenceRows(const __nv_bfloat16* x, const __nv_bfloat16* wg,
                                const __nv_bfloat16* wu, int n, int k, const int* rows,
                                int num_rows, __nv_bfloat16* out, float* tolerance,
                                cudaStream_t stream) {
  if (num_rows < 1 || num_rows > 64) return cudaErrorInvalidValue;
  ReferenceRowsKernel<<<(n + 127) / 128, 128, 0, stream>>>(x, wg, wu, n, k, rows, num_rows, out,
                                                           tolerance);
  return cudaGetLastError();
}

}  // namespace swiglu::cuda
