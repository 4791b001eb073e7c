// cpu_kernel.h — the fast CPU SwiGLU MLP: fused gate/up, the unfused-style baseline, down.
//
// FusedGateUpCpu computes H = SiLU(X·Wgᵀ) ⊙ (X·Wuᵀ) with fp32 accumulation: for each tile the
// gate and up dot products run in the same loop (one load of each X row for both), SiluMulFast
// (silu.h) is applied to the fp32 accumulators and the result rounded to bf16 once.
// UnfusedGateUpCpu is the unfused dataflow for comparison: two GEMMs write G = bf16(X·Wgᵀ) and
// U = bf16(X·Wuᵀ) to memory, an elementwise pass reads them back and writes
// H = bf16(SiluMulFast(G, U)) — three roundings, as the cuBLAS baseline does on a GPU.
// DownCpu computes Y = bf16(H·Wdᵀ) with fp32 accumulation.
//
// Kernels: AVX2+FMA (dispatched at run time with __builtin_cpu_supports) or portable scalar,
// bit-identical to each other (bf16 products are exact in fp32 and both sum in the same order);
// tiles of up to 64 rows x 64 columns handed to `threads` threads (parallel_for.h). Results do
// not depend on the thread count.
//
// Every call blocks until done and is thread-safe (no shared mutable state; concurrent calls
// each start their own threads). Errors: kInvalidArgument when a span's size does not match
// tokens and w.shape (nothing is written), kUnavailable when CpuIsa::kAvx2Fma is requested on a
// CPU without AVX2/FMA.
#pragma once

#include <span>
#include <string_view>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/weights.h"
#include "junction/base/error.h"

namespace swiglu {

enum class CpuIsa {
  kAuto,     // the best this CPU supports
  kScalar,   // portable C++
  kAvx2Fma,  // AVX2 + FMA3
};

std::string_view CpuIsaName(CpuIsa isa);

// What kAuto resolves to on this machine.
CpuIsa DetectCpuIsa();

struct CpuOptions {
  int threads = 0;  // 0 = all hardware threads
  CpuIsa isa = CpuIsa::kAuto;
};

// x: [tokens, hidden]; h: [tokens, intermediate] (output).
junction::Status<void> FusedGateUpCpu(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                                      std::span<Bf16> h, const CpuOptions& options = {});

// Same contract as FusedGateUpCpu, unfused dataflow and numerics (see above).
junction::Status<void> UnfusedGateUpCpu(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                                        std::span<Bf16> h, const CpuOptions& options = {});

// h: [tokens, intermediate]; y: [tokens, hidden] (output).
junction::Status<void> DownCpu(std::span<const Bf16> h, int tokens, const MlpWeights& w,
                               std::span<Bf16> y, const CpuOptions& options = {});

// The whole MLP block: Y = DownCpu(FusedGateUpCpu(X)). Allocates H internally.
junction::Status<void> MlpForwardCpu(std::span<const Bf16> x, int tokens, const MlpWeights& w,
                                     std::span<Bf16> y, const CpuOptions& options = {});

}  // namespace swiglu
