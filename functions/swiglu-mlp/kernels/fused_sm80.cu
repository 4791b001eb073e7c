// fused_sm80.cu — fused SwiGLU gate/up kernel for sm_80 and newer: cp.async + ldmatrix +
// mma.sync.m16n8k16 (bf16 in, fp32 accumulation), SiLU·mul on the accumulators, bf16 H only.
//
// CTA tile: 128 rows of X x 64 columns of H, i.e. 128x64 gate and 128x64 up accumulators from
// one shared-memory copy of each X tile. 8 warps as 4 (M) x 2 (N), each 32x32 of both
// accumulators (64 fp32 registers). K in steps of 32 through a 3-stage cp.async pipeline;
// out-of-range rows and k-chunks are zero-filled (cp.async src-size 0), so M, N and K tails
// need no special path (K must be a multiple of 8: one 16-byte chunk is all in or all out).
// Shared-memory rows are padded to 40 elements (80 bytes) so ldmatrix is conflict-free.
//
// Status (2026-12-04): first run on an NVIDIA H200 (driver 580.159.04, nvcc 13.0): passes
// swiglu_gpu_test (0 elements beyond tolerance) and ran every shape of swiglu_gpu_bench;
// figures in docs/benchmarks/swiglu.md.
#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/kernels/launch.h"
#include "functions/swiglu-mlp/silu.h"

namespace swiglu::cuda {
namespace {

constexpr int kBM = 128;
constexpr int kBN = 64;
constexpr int kBK = 32;
constexpr int kStages = 3;
constexpr int kThreads = 256;
constexpr int kLds = kBK + 8;  // padded row, elements
constexpr int kXTileElems = kBM * kLds;
constexpr int kWTileElems = kBN * kLds;
constexpr int kStageElems = kXTileElems + 2 * kWTileElems;
constexpr int kSmemBytes = kStages * kStageElems * 2;  // 61440

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1; zero-filled when !valid (src not read).
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, bool valid) {
  int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a * b, m16n8k16, row-major A, column-major B (B stored [n][k]), fp32 accumulate.
__device__ __forceinline__ void Mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void LoadStage(__nv_bfloat16* stage, const GateUpProblem& p, int m0,
                                          int n0, int k0, int tid) {
  __nv_bfloat16* sx = stage;
  __nv_bfloat16* sg = stage + kXTileElems;
  __nv_bfloat16* su = sg + kWTileElems;
  // X: 128 rows x 4 chunks of 8 = 512 chunks, 2 per thread.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    int c = tid + i * kThreads;
    int row = c / 4, kc = (c % 4) * 8;
    int gm = m0 + row, gk = k0 + kc;
    bool valid = gm < p.m && gk < p.k;
    const __nv_bfloat16* src = valid ? p.x + static_cast<size_t>(gm) * p.k + gk : p.x;
    CpAsync16(SmemAddr(sx + row * kLds + kc), src, valid);
  }
  // Wg and Wu: 64 rows x 4 chunks = 256 chunks each, 1 per thread.
  {
    int row = tid / 4, kc = (tid % 4) * 8;
    int gn = n0 + row, gk = k0 + kc;
    bool valid = gn < p.n && gk < p.k;
    size_t off = valid ? static_cast<size_t>(gn) * p.k + gk : 0;
    CpAsync16(SmemAddr(sg + row * kLds + kc), p.wg + off, valid);
    CpAsync16(SmemAddr(su + row * kLds + kc), p.wu + off, valid);
  }
}

__device__ __forceinline__ uint16_t HBits(float g, float u) {
  return Bf16FromFloat(SiluMulFast(g, u)).bits;
}

// Two adjacent H values of one row; bounds-checked, paired 4-byte store when aligned.
__device__ __forceinline__ void StorePair(const GateUpProblem& p, int row, int col, float g0,
                                          float u0, float g1, float u1) {
  if (row >= p.m || col >= p.n) return;
  uint16_t h0 = HBits(g0, u0);
  unsigned short* out =
      reinterpret_cast<unsigned short*>(p.h) + static_cast<size_t>(row) * p.n + col;
  if (col + 1 < p.n) {
    uint16_t h1 = HBits(g1, u1);
    if ((p.n & 1) == 0) {
      *reinterpret_cast<uint32_t*>(out) =
          static_cast<uint32_t>(h0) | (static_cast<uint32_t>(h1) << 16);
    } else {
      out[0] = h0;
      out[1] = h1;
    }
  } else {
    out[0] = h0;
  }
}

__global__ void __launch_bounds__(kThreads) FusedSm80Kernel(GateUpProblem p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp % 4, warp_n = warp / 4;
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  const int k_tiles = (p.k + kBK - 1) / kBK;

  float acc_g[2][4][4] = {};
  float acc_u[2][4][4] = {};

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) LoadStage(smem + s * kStageElems, p, m0, n0, s * kBK, tid);
    CpAsyncCommit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    CpAsyncWait<kStages - 2>();  // tile kt has landed (for this thread's copies) ...
    __syncthreads();             // ... and for everyone's; stage (kt-1) % kStages is free
    const int next = kt + kStages - 1;
    if (next < k_tiles)
      LoadStage(smem + (next % kStages) * kStageElems, p, m0, n0, next * kBK, tid);
    CpAsyncCommit();

    const __nv_bfloat16* sx = smem + (kt % kStages) * kStageElems;
    const __nv_bfloat16* sg = sx + kXTileElems;
    const __nv_bfloat16* su = sg + kWTileElems;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      uint32_t a[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        int row = warp_m * 32 + mi * 16 + (lane % 16);
        int col = kk + (lane / 16) * 8;
        LdMatrixX4(a[mi], SmemAddr(sx + row * kLds + col));
      }
      uint32_t bg[4][2], bu[4][2];
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        int row = warp_n * 32 + nj * 16 + (lane % 8) + (lane / 16) * 8;
        int col = kk + ((lane / 8) % 2) * 8;
        uint32_t r[4];
        LdMatrixX4(r, SmemAddr(sg + row * kLds + col));
        bg[2 * nj][0] = r[0];
        bg[2 * nj][1] = r[1];
        bg[2 * nj + 1][0] = r[2];
        bg[2 * nj + 1][1] = r[3];
        LdMatrixX4(r, SmemAddr(su + row * kLds + col));
        bu[2 * nj][0] = r[0];
        bu[2 * nj][1] = r[1];
        bu[2 * nj + 1][0] = r[2];
        bu[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          Mma16816(acc_g[mi][ni], a[mi], bg[ni][0], bg[ni][1]);
          Mma16816(acc_u[mi][ni], a[mi], bu[ni][0], bu[ni][1]);
        }
      }
    }
  }
  CpAsyncWait<0>();

  // Epilogue: accumulator fragment (c0,c1) at (row, col..col+1), (c2,c3) at (row+8, ...).
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      int row = m0 + warp_m * 32 + mi * 16 + lane / 4;
      int col = n0 + warp_n * 32 + ni * 8 + (lane % 4) * 2;
      const float* g = acc_g[mi][ni];
      const float* u = acc_u[mi][ni];
      StorePair(p, row, col, g[0], u[0], g[1], u[1]);
      StorePair(p, row + 8, col, g[2], u[2], g[3], u[3]);
    }
  }
}

}  // namespace

cudaError_t LaunchFusedSm80(const GateUpProblem& p, cudaStream_t stream) {
  if (p.m < 1 || p.n < 1 || p.k < 8 || p.k % 8 != 0) return cudaErrorInvalidValue;
  static const cudaError_t attr = cudaFuncSetAttribute(
      FusedSm80Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (attr != cudaSuccess) return attr;
  dim3 grid((p.n + kBN - 1) / kBN, (p.m + kBM - 1) / kBM);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  FusedSm80Kernel<<<grid, kThreads, kSmemBytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace swiglu::cuda
