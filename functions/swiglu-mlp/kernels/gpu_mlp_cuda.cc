// gpu_mlp_cuda.cc — GpuMlp with CUDA: device buffers, RAII over CUDA/cuBLAS/cuBLASLt handles,
// tensor maps, kernel dispatch, cuBLAS baselines and CUDA-event timing.
//
// Compiled by the C++ compiler (C++23, for Status<T>) against the CUDA headers; the kernels
// live in the .cu files behind launch.h. cuTensorMapEncodeTiled comes from the driver through
// cudaGetDriverEntryPointByVersion (the non-deprecated form of cudaGetDriverEntryPoint), so
// libcuda is never linked directly.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "functions/swiglu-mlp/gpu_mlp.h"
#include "functions/swiglu-mlp/kernels/launch.h"
#include "functions/swiglu-mlp/prng.h"

namespace swiglu {
namespace {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;
using bf16 = __nv_bfloat16;

// --- errors ---------------------------------------------------------------------------------

Status<void> Cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return MakeError(ErrorCode::kInternal, std::string(what) + " failed: " + cudaGetErrorName(e) +
                                             " (" + cudaGetErrorString(e) + ")");
}

Status<void> Blas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return MakeError(ErrorCode::kInternal,
                   std::string(what) + " failed: " + cublasGetStatusString(s));
}

#define SWIGLU_TRY(expr)                                         \
  do {                                                           \
    if (auto swiglu_status_ = (expr); !swiglu_status_) {         \
      return std::unexpected(std::move(swiglu_status_).error()); \
    }                                                            \
  } while (0)

// --- RAII -----------------------------------------------------------------------------------

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
template <typename T>
using DevicePtr = std::unique_ptr<T, DeviceFree>;

template <typename T>
Status<DevicePtr<T>> DeviceAlloc(size_t count, const char* what) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T));
  if (e != cudaSuccess) {
    cudaGetLastError();
    return MakeError(ErrorCode::kResourceExhausted,
                     std::string("cannot allocate ") + std::to_string(count * sizeof(T) >> 20) +
                         " MiB of GPU memory for " + what + ": " + cudaGetErrorString(e) +
                         "; lower max_tokens or use a smaller model");
  }
  return DevicePtr<T>(static_cast<T*>(p));
}

struct StreamDestroy {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
using Stream = std::unique_ptr<CUstream_st, StreamDestroy>;
struct EventDestroy {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using Event = std::unique_ptr<CUevent_st, EventDestroy>;
struct BlasDestroy {
  void operator()(cublasHandle_t h) const { cublasDestroy(h); }
};
using BlasHandle = std::unique_ptr<cublasContext, BlasDestroy>;
struct LtDestroy {
  void operator()(cublasLtHandle_t h) const { cublasLtDestroy(h); }
};
using LtHandle = std::unique_ptr<cublasLtContext, LtDestroy>;
struct LtDescDestroy {
  void operator()(cublasLtMatmulDesc_t d) const { cublasLtMatmulDescDestroy(d); }
};
using LtDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, LtDescDestroy>;
struct LtLayoutDestroy {
  void operator()(cublasLtMatrixLayout_t l) const { cublasLtMatrixLayoutDestroy(l); }
};
using LtLayout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LtLayoutDestroy>;
struct LtPrefDestroy {
  void operator()(cublasLtMatmulPreference_t p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using LtPref = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, LtPrefDestroy>;

constexpr size_t kLtWorkspaceBytes = 32u << 20;
constexpr int kMaxReferenceRows = 64;

// --- tensor maps ----------------------------------------------------------------------------

Status<PFN_cuTensorMapEncodeTiled_v12000> TensorMapEncoder() {
  static void* fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      p = nullptr;
    }
    return p;
  }();
  if (fn == nullptr) {
    return MakeError(ErrorCode::kUnavailable,
                     "the CUDA driver has no cuTensorMapEncodeTiled (needs a CUDA 12+ driver); "
                     "update the driver or use the sm_80 kernel");
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

// A 2-D bf16 tensor [rows, cols] (row-major), boxes of box_rows x 64 columns, 128B swizzle,
// out-of-range elements read as zero.
Status<CUtensorMap> EncodeTensorMap(const bf16* ptr, int rows, int cols, int box_rows) {
  auto encode = TensorMapEncoder();
  if (!encode) return std::unexpected(encode.error());
  CUtensorMap map{};
  cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(bf16)};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(cuda::kSm90BlockK),
                       static_cast<cuuint32_t>(box_rows)};
  cuuint32_t element_strides[2] = {1, 1};
  CUresult r =
      (*encode)(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(ptr), dims, strides,
                box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return MakeError(ErrorCode::kInternal,
                     "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r) +
                         " for a [" + std::to_string(rows) + ", " + std::to_string(cols) +
                         "] bf16 tensor (the row width must be a multiple of 8)");
  }
  return map;
}

}  // namespace

std::string_view GpuGateUpName(GpuGateUp v) {
  switch (v) {
    case GpuGateUp::kFusedSm90Overlap:
      return "fused-sm90-overlap";
    case GpuGateUp::kFusedSm90Epilogue:
      return "fused-sm90-epilogue";
    case GpuGateUp::kFusedSm80:
      return "fused-sm80";
    case GpuGateUp::kUnfusedCublas:
      return "unfused-cublas";
  }
  return "unknown";
}

struct GpuMlp::Impl {
  GpuDeviceInfo device;
  MlpShape shape;
  int max_tokens = 0;
  int tokens = 0;
  bool sm90_compiled = false;

  Stream stream;
  Event start, mid, stop;
  BlasHandle blas;
  LtHandle lt;

  DevicePtr<bf16> w_gate_up;  // [2N, K]: gate rows, then up rows
  DevicePtr<bf16> w_down;     // [K, N]
  DevicePtr<bf16> x;          // [max_tokens, K]
  DevicePtr<bf16> h;          // [max_tokens, N]
  DevicePtr<bf16> gu;         // [max_tokens, 2N]: unfused G then U; the reference GEMM's output
  DevicePtr<bf16> y;          // [max_tokens, K]
  DevicePtr<uint8_t> lt_workspace;
  DevicePtr<int> ref_rows;   // [kMaxReferenceRows]
  DevicePtr<bf16> ref_out;   // [kMaxReferenceRows, N]
  DevicePtr<float> ref_tol;  // [kMaxReferenceRows, N]

  // Tensor maps of the weights (fixed) and of X for `x_map_tokens` rows.
  cuda::Sm90TensorMaps maps{};
  int x_map_tokens = -1;

  int n() const { return shape.intermediate; }
  int k() const { return shape.hidden; }
  bf16* wg() const { return w_gate_up.get(); }
  bf16* wu() const { return w_gate_up.get() + static_cast<size_t>(n()) * k(); }
  cudaStream_t s() const { return stream.get(); }

  Status<void> Select() const { return Cuda(cudaSetDevice(device.device), "cudaSetDevice"); }
  Status<void> Sync(const char* what) const { return Cuda(cudaStreamSynchronize(s()), what); }

  bool Supports(GpuGateUp v) const {
    switch (v) {
      case GpuGateUp::kFusedSm90Overlap:
      case GpuGateUp::kFusedSm90Epilogue:
        return sm90_compiled && device.cc_major == 9 && device.cc_minor == 0 && k() % 8 == 0;
      case GpuGateUp::kFusedSm80:
        return device.cc_major >= 8 && k() % 8 == 0;
      case GpuGateUp::kUnfusedCublas:
        return device.cc_major >= 8;
    }
    return false;
  }

  Status<void> NeedInput() const {
    if (tokens > 0) return {};
    return MakeError(ErrorCode::kInvalidArgument,
                     "no input yet: call UploadInput or GenerateInput first");
  }

  Status<void> EnsureMaps() {
    if (x_map_tokens == tokens) return {};
    auto mx = EncodeTensorMap(x.get(), tokens, k(), cuda::kSm90BlockM);
    if (!mx) return std::unexpected(mx.error());
    if (x_map_tokens < 0) {
      auto mg = EncodeTensorMap(wg(), n(), k(), cuda::kSm90BlockN);
      if (!mg) return std::unexpected(mg.error());
      auto mu = EncodeTensorMap(wu(), n(), k(), cuda::kSm90BlockN);
      if (!mu) return std::unexpected(mu.error());
      maps.wg = *mg;
      maps.wu = *mu;
    }
    maps.x = *mx;
    x_map_tokens = tokens;
    return {};
  }

  // row-major C[m, nn] = A[m, K]·B[nn, K]ᵀ in bf16 with fp32 accumulation (cuBLAS, column-major
  // view: Cᵀ = B·Aᵀ).
  Status<void> BlasGemm(const bf16* a, const bf16* b, int nn, bf16* c) {
    const float alpha = 1.0f, beta = 0.0f;
    return Blas(cublasGemmEx(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, nn, tokens, k(), &alpha, b,
                             CUDA_R_16BF, k(), a, CUDA_R_16BF, k(), &beta, c, CUDA_R_16BF, nn,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx (bf16, fp32 accumulation)");
  }

  // Enqueues one gate/up computation (no synchronisation).
  Status<void> EnqueueGateUp(GpuGateUp v) {
    SWIGLU_TRY(NeedInput());
    if (!Supports(v)) {
      return MakeError(ErrorCode::kUnavailable,
                       std::string(GpuGateUpName(v)) + " cannot run on " + device.name +
                           " (compute capability " + std::to_string(device.cc_major) + "." +
                           std::to_string(device.cc_minor) +
                           "): the sm_90a kernels need an H100/H200-class GPU (9.0) and this "
                           "build's 90a target, the fused kernels need hidden % 8 == 0; use "
                           "another variant");
    }
    cuda::GateUpProblem p{x.get(), wg(), wu(), h.get(), tokens, n(), k()};
    switch (v) {
      case GpuGateUp::kFusedSm90Overlap:
      case GpuGateUp::kFusedSm90Epilogue: {
        SWIGLU_TRY(EnsureMaps());
        auto schedule = v == GpuGateUp::kFusedSm90Overlap ? cuda::Sm90Schedule::kMainloopOverlap
                                                          : cuda::Sm90Schedule::kEpilogueFusion;
        return Cuda(cuda::LaunchFusedSm90(p, maps, schedule, device.sm_count, s()),
                    "launching the sm_90a fused SwiGLU kernel");
      }
      case GpuGateUp::kFusedSm80:
        return Cuda(cuda::LaunchFusedSm80(p, s()), "launching the sm_80 fused SwiGLU kernel");
      case GpuGateUp::kUnfusedCublas: {
        bf16* g = gu.get();
        bf16* u = gu.get() + static_cast<size_t>(tokens) * n();
        SWIGLU_TRY(BlasGemm(x.get(), wg(), n(), g));
        SWIGLU_TRY(BlasGemm(x.get(), wu(), n(), u));
        return Cuda(cuda::LaunchSiluMul(g, u, h.get(), static_cast<int64_t>(tokens) * n(), s()),
                    "launching the SiLU·mul kernel");
      }
    }
    return MakeError(ErrorCode::kInvalidArgument, "unknown GpuGateUp value");
  }

  // Y[tokens, K] = H[tokens, N]·Wdᵀ with cuBLASLt (column-major view: Yᵀ = Wd·Hᵀ).
  Status<void> EnqueueDown() {
    SWIGLU_TRY(NeedInput());
    cublasLtMatmulDesc_t desc_raw = nullptr;
    SWIGLU_TRY(Blas(cublasLtMatmulDescCreate(&desc_raw, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                    "cublasLtMatmulDescCreate"));
    LtDesc desc(desc_raw);
    const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    SWIGLU_TRY(Blas(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA,
                                                   &trans_a, sizeof trans_a),
                    "cublasLtMatmulDescSetAttribute(TRANSA)"));
    SWIGLU_TRY(Blas(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB,
                                                   &trans_b, sizeof trans_b),
                    "cublasLtMatmulDescSetAttribute(TRANSB)"));
    auto layout = [](uint64_t rows, uint64_t cols, int64_t ld) -> Status<LtLayout> {
      cublasLtMatrixLayout_t l = nullptr;
      SWIGLU_TRY(Blas(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, rows, cols, ld),
                      "cublasLtMatrixLayoutCreate"));
      return LtLayout(l);
    };
    // A = Wd storage seen column-major: [N, K] (ld N), transposed -> K x N.
    auto la = layout(n(), k(), n());
    auto lb = layout(n(), tokens, n());  // H storage: [N, tokens], ld N
    auto lc = layout(k(), tokens, k());  // Y storage: [K, tokens], ld K
    if (!la) return std::unexpected(la.error());
    if (!lb) return std::unexpected(lb.error());
    if (!lc) return std::unexpected(lc.error());
    cublasLtMatmulPreference_t pref_raw = nullptr;
    SWIGLU_TRY(Blas(cublasLtMatmulPreferenceCreate(&pref_raw), "cublasLtMatmulPreferenceCreate"));
    LtPref pref(pref_raw);
    const size_t ws = kLtWorkspaceBytes;
    SWIGLU_TRY(Blas(cublasLtMatmulPreferenceSetAttribute(
                        pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                    "cublasLtMatmulPreferenceSetAttribute"));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    SWIGLU_TRY(
        Blas(cublasLtMatmulAlgoGetHeuristic(lt.get(), desc.get(), la->get(), lb->get(), lc->get(),
                                            lc->get(), pref.get(), 1, &heuristic, &found),
             "cublasLtMatmulAlgoGetHeuristic"));
    if (found == 0) {
      return MakeError(ErrorCode::kUnavailable,
                       "cuBLASLt has no bf16 algorithm for the down projection on " + device.name);
    }
    const float alpha = 1.0f, beta = 0.0f;
    return Blas(cublasLtMatmul(lt.get(), desc.get(), &alpha, w_down.get(), la->get(), h.get(),
                               lb->get(), &beta, y.get(), lc->get(), y.get(), lc->get(),
                               &heuristic.algo, lt_workspace.get(), ws, s()),
                "cublasLtMatmul (down projection)");
  }

  Status<float> ElapsedUs(cudaEvent_t a, cudaEvent_t b) const {
    float ms = 0;
    SWIGLU_TRY(Cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime"));
    return ms * 1000.0f;
  }

  template <typename Enqueue>
  Status<float> Time(Enqueue enqueue, int warmup, int iters) {
    if (iters < 1 || warmup < 0) {
      return MakeError(ErrorCode::kInvalidArgument, "iters must be >= 1 and warmup >= 0");
    }
    for (int i = 0; i < warmup; ++i) SWIGLU_TRY(enqueue());
    SWIGLU_TRY(Cuda(cudaEventRecord(start.get(), s()), "cudaEventRecord"));
    for (int i = 0; i < iters; ++i) SWIGLU_TRY(enqueue());
    SWIGLU_TRY(Cuda(cudaEventRecord(stop.get(), s()), "cudaEventRecord"));
    SWIGLU_TRY(Cuda(cudaEventSynchronize(stop.get()), "cudaEventSynchronize"));
    auto us = ElapsedUs(start.get(), stop.get());
    if (!us) return us;
    return *us / iters;
  }

  Status<std::vector<Bf16>> Read(const bf16* src, size_t count, const char* what) const {
    SWIGLU_TRY(NeedInput());
    std::vector<Bf16> out(count);
    SWIGLU_TRY(Cuda(
        cudaMemcpyAsync(out.data(), src, count * sizeof(bf16), cudaMemcpyDeviceToHost, s()), what));
    SWIGLU_TRY(Sync(what));
    return out;
  }
};

Status<GpuDeviceInfo> GpuMlp::Probe(int device) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return MakeError(ErrorCode::kUnavailable,
                     std::string("no CUDA device (") +
                         (e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0") +
                         "); the SwiGLU MLP runs on the CPU path");
  }
  if (device < 0 || device >= count) {
    return MakeError(ErrorCode::kUnavailable, "CUDA device " + std::to_string(device) +
                                                  " does not exist (" + std::to_string(count) +
                                                  " present)");
  }
  cudaDeviceProp prop{};
  SWIGLU_TRY(Cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"));
  GpuDeviceInfo info;
  info.device = device;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.memory_bytes = prop.totalGlobalMem;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) info.pci_bus_id = bus;
  cudaGetLastError();
  return info;
}

Status<GpuMlp> GpuMlp::Create(const MlpShape& shape, const GpuMlpOptions& options) {
  if (shape.hidden <= 0 || shape.intermediate <= 0) {
    return MakeError(ErrorCode::kInvalidArgument, "the MLP shape must have positive sizes");
  }
  if (options.max_tokens < 1 || options.max_tokens > 65536) {
    return MakeError(ErrorCode::kInvalidArgument, "max_tokens must be in 1..65536");
  }
  auto info = Probe(options.device);
  if (!info) return std::unexpected(info.error());
  auto impl = std::make_unique<Impl>();
  impl->device = *info;
  impl->shape = shape;
  impl->max_tokens = options.max_tokens;
  SWIGLU_TRY(impl->Select());
  impl->sm90_compiled = cuda::Sm90KernelsCompiled();

  cudaStream_t stream = nullptr;
  SWIGLU_TRY(Cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  impl->stream.reset(stream);
  for (Event* ev : {&impl->start, &impl->mid, &impl->stop}) {
    cudaEvent_t e = nullptr;
    SWIGLU_TRY(Cuda(cudaEventCreate(&e), "cudaEventCreate"));
    ev->reset(e);
  }
  cublasHandle_t blas = nullptr;
  SWIGLU_TRY(Blas(cublasCreate(&blas), "cublasCreate"));
  impl->blas.reset(blas);
  SWIGLU_TRY(Blas(cublasSetStream(blas, stream), "cublasSetStream"));
  cublasLtHandle_t lt = nullptr;
  SWIGLU_TRY(Blas(cublasLtCreate(&lt), "cublasLtCreate"));
  impl->lt.reset(lt);

  const size_t n = shape.intermediate, k = shape.hidden, t = options.max_tokens;
  auto alloc = [](DevicePtr<bf16>* out, size_t count, const char* what) -> Status<void> {
    auto p = DeviceAlloc<bf16>(count, what);
    if (!p) return std::unexpected(p.error());
    *out = std::move(*p);
    return {};
  };
  SWIGLU_TRY(alloc(&impl->w_gate_up, 2 * n * k, "the gate/up weights"));
  SWIGLU_TRY(alloc(&impl->w_down, n * k, "the down weights"));
  SWIGLU_TRY(alloc(&impl->x, t * k, "X"));
  SWIGLU_TRY(alloc(&impl->h, t * n, "H"));
  SWIGLU_TRY(alloc(&impl->gu, 2 * t * n, "the unfused G/U scratch"));
  SWIGLU_TRY(alloc(&impl->y, t * k, "Y"));
  SWIGLU_TRY(alloc(&impl->ref_out, kMaxReferenceRows * n, "reference rows"));
  auto ws = DeviceAlloc<uint8_t>(kLtWorkspaceBytes, "the cuBLASLt workspace");
  if (!ws) return std::unexpected(ws.error());
  impl->lt_workspace = std::move(*ws);
  auto tol = DeviceAlloc<float>(kMaxReferenceRows * n, "reference tolerances");
  if (!tol) return std::unexpected(tol.error());
  impl->ref_tol = std::move(*tol);
  auto rows = DeviceAlloc<int>(kMaxReferenceRows, "reference row indices");
  if (!rows) return std::unexpected(rows.error());
  impl->ref_rows = std::move(*rows);
  SWIGLU_TRY(Cuda(cudaMemsetAsync(impl->w_gate_up.get(), 0, 2 * n * k * sizeof(bf16), stream),
                  "cudaMemset"));
  SWIGLU_TRY(
      Cuda(cudaMemsetAsync(impl->w_down.get(), 0, n * k * sizeof(bf16), stream), "cudaMemset"));
  SWIGLU_TRY(impl->Sync("initialising the GPU buffers"));
  return GpuMlp(std::move(impl));
}

GpuMlp::GpuMlp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuMlp::GpuMlp(GpuMlp&&) noexcept = default;
GpuMlp& GpuMlp::operator=(GpuMlp&&) noexcept = default;
GpuMlp::~GpuMlp() {
  if (impl_) cudaSetDevice(impl_->device.device);  // handles are freed on their device
}

const GpuDeviceInfo& GpuMlp::device() const {
  return impl_->device;
}
const MlpShape& GpuMlp::shape() const {
  return impl_->shape;
}
int GpuMlp::tokens() const {
  return impl_->tokens;
}
bool GpuMlp::Supports(GpuGateUp v) const {
  return impl_->Supports(v);
}

Status<void> GpuMlp::UploadWeights(const MlpWeights& w) {
  Impl& m = *impl_;
  const size_t count = static_cast<size_t>(m.n()) * m.k();
  if (!(w.shape == m.shape) || w.gate.size() != count || w.up.size() != count ||
      w.down.size() != count) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "weights of shape (" + std::to_string(w.shape.hidden) + ", " +
                         std::to_string(w.shape.intermediate) + ") do not fit a GpuMlp of shape (" +
                         std::to_string(m.k()) + ", " + std::to_string(m.n()) + ")");
  }
  SWIGLU_TRY(m.Select());
  const size_t bytes = count * sizeof(bf16);
  SWIGLU_TRY(Cuda(cudaMemcpyAsync(m.wg(), w.gate.data(), bytes, cudaMemcpyHostToDevice, m.s()),
                  "copying the gate weights"));
  SWIGLU_TRY(Cuda(cudaMemcpyAsync(m.wu(), w.up.data(), bytes, cudaMemcpyHostToDevice, m.s()),
                  "copying the up weights"));
  SWIGLU_TRY(
      Cuda(cudaMemcpyAsync(m.w_down.get(), w.down.data(), bytes, cudaMemcpyHostToDevice, m.s()),
           "copying the down weights"));
  return m.Sync("uploading weights");
}

Status<void> GpuMlp::GenerateWeights(uint64_t seed) {
  Impl& m = *impl_;
  SWIGLU_TRY(m.Select());
  const int64_t count = static_cast<int64_t>(m.n()) * m.k();
  SWIGLU_TRY(
      Cuda(cuda::LaunchSeededFill(m.wg(), count, StreamKey(seed, kStreamGate), kWeightStd, m.s()),
           "filling the gate weights"));
  SWIGLU_TRY(
      Cuda(cuda::LaunchSeededFill(m.wu(), count, StreamKey(seed, kStreamUp), kWeightStd, m.s()),
           "filling the up weights"));
  SWIGLU_TRY(Cuda(cuda::LaunchSeededFill(m.w_down.get(), count, StreamKey(seed, kStreamDown),
                                         kWeightStd, m.s()),
                  "filling the down weights"));
  return m.Sync("generating weights");
}

namespace {
Status<void> CheckTokens(int tokens, int max_tokens) {
  if (tokens >= 1 && tokens <= max_tokens) return {};
  return MakeError(ErrorCode::kInvalidArgument, "tokens = " + std::to_string(tokens) +
                                                    " is outside 1.." + std::to_string(max_tokens) +
                                                    " (GpuMlpOptions::max_tokens)");
}
}  // namespace

Status<void> GpuMlp::UploadInput(std::span<const Bf16> x, int tokens) {
  Impl& m = *impl_;
  SWIGLU_TRY(CheckTokens(tokens, m.max_tokens));
  if (x.size() != static_cast<size_t>(tokens) * m.k()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "X holds " + std::to_string(x.size()) +
                         " values; expected tokens x hidden = " +
                         std::to_string(static_cast<size_t>(tokens) * m.k()));
  }
  SWIGLU_TRY(m.Select());
  SWIGLU_TRY(Cuda(
      cudaMemcpyAsync(m.x.get(), x.data(), x.size() * sizeof(bf16), cudaMemcpyHostToDevice, m.s()),
      "copying X"));
  SWIGLU_TRY(m.Sync("uploading X"));
  m.tokens = tokens;
  return {};
}

Status<void> GpuMlp::GenerateInput(uint64_t seed, int tokens) {
  Impl& m = *impl_;
  SWIGLU_TRY(CheckTokens(tokens, m.max_tokens));
  SWIGLU_TRY(m.Select());
  SWIGLU_TRY(
      Cuda(cuda::LaunchSeededFill(m.x.get(), static_cast<int64_t>(tokens) * m.k(),
                                  StreamKey(seed, kStreamActivations), kActivationStd, m.s()),
           "filling X"));
  SWIGLU_TRY(m.Sync("generating X"));
  m.tokens = tokens;
  return {};
}

Status<void> GpuMlp::GateUp(GpuGateUp v) {
  SWIGLU_TRY(impl_->Select());
  SWIGLU_TRY(impl_->EnqueueGateUp(v));
  return impl_->Sync(GpuGateUpName(v).data());
}

Status<void> GpuMlp::Down() {
  SWIGLU_TRY(impl_->Select());
  SWIGLU_TRY(impl_->EnqueueDown());
  return impl_->Sync("the down projection");
}

Status<GpuForwardResult> GpuMlp::Forward(GpuGateUp v) {
  Impl& m = *impl_;
  SWIGLU_TRY(m.Select());
  SWIGLU_TRY(Cuda(cudaEventRecord(m.start.get(), m.s()), "cudaEventRecord"));
  SWIGLU_TRY(m.EnqueueGateUp(v));
  SWIGLU_TRY(Cuda(cudaEventRecord(m.mid.get(), m.s()), "cudaEventRecord"));
  SWIGLU_TRY(m.EnqueueDown());
  SWIGLU_TRY(Cuda(cudaEventRecord(m.stop.get(), m.s()), "cudaEventRecord"));
  SWIGLU_TRY(Cuda(cudaEventSynchronize(m.stop.get()), "cudaEventSynchronize"));
  GpuForwardResult r;
  auto a = m.ElapsedUs(m.start.get(), m.mid.get());
  auto b = m.ElapsedUs(m.mid.get(), m.stop.get());
  if (!a) return std::unexpected(a.error());
  if (!b) return std::unexpected(b.error());
  r.gate_up_us = *a;
  r.down_us = *b;
  auto y = m.Read(m.y.get(), static_cast<size_t>(m.tokens) * m.k(), "copying Y");
  if (!y) return std::unexpected(y.error());
  r.y = std::move(*y);
  return r;
}

Status<float> GpuMlp::TimeGateUp(GpuGateUp v, int warmup, int iters) {
  SWIGLU_TRY(impl_->Select());
  return impl_->Time([&] { return impl_->EnqueueGateUp(v); }, warmup, iters);
}

Status<float> GpuMlp::TimeReferenceGemm(int warmup, int iters) {
  Impl& m = *impl_;
  SWIGLU_TRY(m.Select());
  SWIGLU_TRY(m.NeedInput());
  return m.Time([&] { return m.BlasGemm(m.x.get(), m.w_gate_up.get(), 2 * m.n(), m.gu.get()); },
                warmup, iters);
}

Status<std::vector<Bf16>> GpuMlp::ReadH() const {
  SWIGLU_TRY(impl_->Select());
  return impl_->Read(impl_->h.get(), static_cast<size_t>(impl_->tokens) * impl_->n(), "copying H");
}

Status<std::vector<Bf16>> GpuMlp::ReadY() const {
  SWIGLU_TRY(impl_->Select());
  return impl_->Read(impl_->y.get(), static_cast<size_t>(impl_->tokens) * impl_->k(), "copying Y");
}

Status<ReferenceResult> GpuMlp::ReferenceGateUpRows(std::span<const int> rows) const {
  const Impl& m = *impl_;
  SWIGLU_TRY(m.NeedInput());
  if (rows.empty() || rows.size() > kMaxReferenceRows) {
    return MakeError(ErrorCode::kInvalidArgument, "give 1..64 rows for the device reference");
  }
  for (int r : rows) {
    if (r < 0 || r >= m.tokens) {
      return MakeError(ErrorCode::kInvalidArgument, "row " + std::to_string(r) +
                                                        " is outside the current input (" +
                                                        std::to_string(m.tokens) + " tokens)");
    }
  }
  SWIGLU_TRY(m.Select());
  SWIGLU_TRY(Cuda(cudaMemcpyAsync(m.ref_rows.get(), rows.data(), rows.size() * sizeof(int),
                                  cudaMemcpyHostToDevice, m.s()),
                  "copying reference rows"));
  SWIGLU_TRY(Cuda(cuda::LaunchReferenceRows(m.x.get(), m.wg(), m.wu(), m.n(), m.k(),
                                            m.ref_rows.get(), static_cast<int>(rows.size()),
                                            m.ref_out.get(), m.ref_tol.get(), m.s()),
                  "launching the fp64 reference kernel"));
  const size_t count = rows.size() * m.n();
  auto value = m.Read(m.ref_out.get(), count, "copying reference rows back");
  if (!value) return std::unexpected(value.error());
  ReferenceResult r;
  r.value = std::move(*value);
  r.tolerance.resize(count);
  SWIGLU_TRY(Cuda(cudaMemcpyAsync(r.tolerance.data(), m.ref_tol.get(), count * sizeof(float),
                                  cudaMemcpyDeviceToHost, m.s()),
                  "copying reference tolerances back"));
  SWIGLU_TRY(m.Sync("copying reference tolerances back"));
  return r;
}

}  // namespace swiglu
