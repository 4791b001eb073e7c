// launch.h — host entry points of the SwiGLU CUDA kernels (internal to swiglu_mlp).
//
// Included by the .cu files (nvcc, C++17) and by gpu_mlp_cuda.cc (g++, C++23), so it uses
// only CUDA runtime types. Every function enqueues work on `stream` and returns at once
// (asynchronous); the returned cudaError_t reports launch errors only. Device pointers must be
// 16-byte aligned (cudaMalloc gives 256) and row strides are the matrix widths (dense,
// row-major). Thread-safe as CUDA launches are.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: libcuda is reached through the runtime)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace swiglu::cuda {

// H[m, n] = bf16(SiluMulFast(X·Wgᵀ, X·Wuᵀ)) for X [m, k], Wg/Wu [n, k]. k % 8 == 0.
struct GateUpProblem {
  const __nv_bfloat16* x = nullptr;
  const __nv_bfloat16* wg = nullptr;
  const __nv_bfloat16* wu = nullptr;
  __nv_bfloat16* h = nullptr;
  int m = 0, n = 0, k = 0;
};

// sm_80+ kernel: 128x64 tiles of H (gate and up accumulators for each), 8 warps of mma.sync,
// a 3-stage cp.async pipeline. Any m, n >= 1; k % 8 == 0.
cudaError_t LaunchFusedSm80(const GateUpProblem& p, cudaStream_t stream);

// sm_90a kernels: tile sizes the tensor maps must use as their boxes.
inline constexpr int kSm90BlockM = 128;  // X box rows (two consumer warpgroups x 64)
inline constexpr int kSm90BlockN = 128;  // Wg/Wu box rows
inline constexpr int kSm90BlockK = 64;   // box columns: 64 bf16 = one 128-byte swizzle row

// TMA descriptors (CU_TENSOR_MAP_SWIZZLE_128B, boxes {kSm90BlockK, kSm90BlockM|N}) of X, Wg,
// Wu, encoded by the host with cuTensorMapEncodeTiled.
struct Sm90TensorMaps {
  CUtensorMap x;
  CUtensorMap wg;
  CUtensorMap wu;
};

enum class Sm90Schedule {
  kMainloopOverlap,  // persistent CTAs; SiLU(gate) overlaps the last up wgmma and next loads
  kEpilogueFusion,   // one tile per CTA; SiLU·mul interleaved with the stores of H
};

// Whether this build compiled the sm_90a kernel bodies (CMAKE_CUDA_ARCHITECTURES has 90a).
bool Sm90KernelsCompiled();

// Needs a compute capability 9.0 device. `num_sms` sizes the persistent grid.
cudaError_t LaunchFusedSm90(const GateUpProblem& p, const Sm90TensorMaps& maps,
                            Sm90Schedule schedule, int num_sms, cudaStream_t stream);

// h[i] = bf16(SiluMulFast(g[i], u[i])): the elementwise step of the unfused baseline.
cudaError_t LaunchSiluMul(const __nv_bfloat16* g, const __nv_bfloat16* u, __nv_bfloat16* h,
                          int64_t count, cudaStream_t stream);

// dst[i] = SeededBf16(key, i, std_dev) (prng.h), i in [0, count).
cudaError_t LaunchSeededFill(__nv_bfloat16* dst, int64_t count, uint64_t key, float std_dev,
                             cudaStream_t stream);

// out[r, j] = ReferenceGateUpElement(x[rows[r]], wg[j], wu[j], k) (fp64, reference_element.h)
// and tolerance[r, j] = its GateUpTolerance, for r < num_rows (<= 64), j < n. rows, out and
// tolerance are device arrays.
cudaError_t LaunchReferenceRows(const __nv_bfloat16* x, const __nv_bfloat16* wg,
                                const __nv_bfloat16* wu, int n, int k, const int* rows,
                                int num_rows, __nv_bfloat16* out, float* tolerance,
                                cudaStream_t stream);

}  // namespace swiglu::cuda
