// gpu_mlp.h — the SwiGLU MLP on a CUDA GPU: fused gate/up kernels, cuBLAS baselines, cuBLASLt
// down projection, CUDA-event timing. Compiles without CUDA.
//
//   auto mlp = swiglu::GpuMlp::Create(swiglu::kQwen25Shapes[0], {.max_tokens = 128});
//   if (!mlp) { /* kUnavailable: no CUDA in this build or no device; use cpu_kernel.h */ }
//   mlp->UploadWeights(weights);            // or GenerateWeights(seed): same bits as the host
//   mlp->UploadInput(x, tokens);
//   auto run = mlp->Forward(GpuGateUp::kFusedSm90Overlap);   // Y, and GPU times in µs
//
// Ownership: a GpuMlp owns its device buffers (weights, X, H, Y and scratch sized for
// max_tokens), one CUDA stream, CUDA events, a cuBLAS and a cuBLASLt handle; all are released
// by the destructor. Move-only.
// Threads: one GpuMlp must be used by one thread at a time (no internal locking); different
// objects are independent. Every call selects its device first.
// Blocking: every call returns after the GPU work it issued has finished (it synchronises its
// stream), so host buffers may be reused at once.
// Errors: kUnavailable when the build has no CUDA, no device is present, or the variant needs
// another architecture (the message says which); kInvalidArgument for sizes; kInternal for a
// CUDA/cuBLAS failure (the message names the call and the CUDA error). After a kInternal error
// the object should be destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/reference.h"
#include "functions/swiglu-mlp/shapes.h"
#include "functions/swiglu-mlp/weights.h"
#include "junction/base/error.h"

namespace swiglu {

// How H = SiLU(X·Wgᵀ) ⊙ (X·Wuᵀ) is computed on the GPU.
enum class GpuGateUp {
  kFusedSm90Overlap,   // sm_90a: TMA producer warp + 2 wgmma consumer warpgroups, persistent;
                       // SiLU of the gate accumulator overlaps the last up wgmma and the
                       // producer's loads of the next tile ("mainloop overlap")
  kFusedSm90Epilogue,  // sm_90a: same mainloop, one tile per CTA, SiLU·mul interleaved with the
                       // stores of H ("epilogue fusion")
  kFusedSm80,          // sm_80+: cp.async pipeline + mma.sync, SiLU·mul in the epilogue
  kUnfusedCublas,      // two cuBLAS GEMMs write G and U in bf16, then an elementwise SiLU·mul
};
inline constexpr GpuGateUp kAllGpuGateUp[] = {GpuGateUp::kFusedSm90Overlap,
                                              GpuGateUp::kFusedSm90Epilogue, GpuGateUp::kFusedSm80,
                                              GpuGateUp::kUnfusedCublas};
std::string_view GpuGateUpName(GpuGateUp v);

struct GpuDeviceInfo {
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  uint64_t memory_bytes = 0;
  std::string pci_bus_id;  // "0000:3b:00.0" (cudaDeviceGetPCIBusId): how NVML finds it
};

struct GpuMlpOptions {
  int device = 0;
  int max_tokens = 4096;  // buffers are sized for this many tokens (1 .. 65536)
};

// GPU time of one Forward, from CUDA events on the GpuMlp's stream.
struct GpuForwardResult {
  std::vector<Bf16> y;  // [tokens, hidden]
  float gate_up_us = 0;
  float down_us = 0;
};

class GpuMlp {
 public:
  // The device `device`, or kUnavailable (no CUDA in this build, no driver, no such device).
  static junction::Status<GpuDeviceInfo> Probe(int device = 0);

  // Allocates everything for `shape` and options.max_tokens. Weights start zeroed.
  static junction::Status<GpuMlp> Create(const MlpShape& shape, const GpuMlpOptions& options = {});

  GpuMlp(GpuMlp&&) noexcept;
  GpuMlp& operator=(GpuMlp&&) noexcept;
  ~GpuMlp();

  const GpuDeviceInfo& device() const;
  const MlpShape& shape() const;
  int tokens() const;  // of the current input

  // Whether `v` can run on this device (sm_90a variants need compute capability 9.0, the
  // sm_80 kernel 8.0 or newer). Run calls of an unsupported variant return kUnavailable.
  bool Supports(GpuGateUp v) const;

  junction::Status<void> UploadWeights(const MlpWeights& w);
  // Fills the weights on the device; bit-identical to MakeSeededWeights(shape, seed).
  junction::Status<void> GenerateWeights(uint64_t seed);

  // X [tokens, hidden]; 1 <= tokens <= max_tokens.
  junction::Status<void> UploadInput(std::span<const Bf16> x, int tokens);
  // Bit-identical to MakeSeededActivations(tokens, hidden, seed).
  junction::Status<void> GenerateInput(uint64_t seed, int tokens);

  // H = SwiGLU gate/up of the current input with variant `v`.
  junction::Status<void> GateUp(GpuGateUp v);
  // Y = H·Wdᵀ through cuBLASLt (bf16 in/out, fp32 accumulation).
  junction::Status<void> Down();
  // GateUp(v) then Down(), timed; returns Y.
  junction::Status<GpuForwardResult> Forward(GpuGateUp v);

  // Mean µs per call over `iters` calls after `warmup` calls, from CUDA events.
  junction::Status<float> TimeGateUp(GpuGateUp v, int warmup, int iters);
  // The same for one cuBLAS bf16 GEMM with the dual GEMM's FLOPs: X·[Wg;Wu]ᵀ -> [tokens, 2N].
  junction::Status<float> TimeReferenceGemm(int warmup, int iters);

  junction::Status<std::vector<Bf16>> ReadH() const;  // [tokens, intermediate]
  junction::Status<std::vector<Bf16>> ReadY() const;  // [tokens, hidden]

  // The fp64 reference (reference_element.h) of H for the given rows (1..64 of them) of the
  // current input, computed on the device, with the tolerances of reference.h:
  // [rows.size(), intermediate]. For spot checks of shapes too large for the CPU reference.
  junction::Status<ReferenceResult> ReferenceGateUpRows(std::span<const int> rows) const;

 private:
  struct Impl;
  explicit GpuMlp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace swiglu
