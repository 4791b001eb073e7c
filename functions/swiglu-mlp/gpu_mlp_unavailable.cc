// gpu_mlp_unavailable.cc — GpuMlp for builds without CUDA: every entry point says so.
//
// Linked instead of kernels/gpu_mlp_cuda.cc when CMake found no nvcc. Create and Probe return
// kUnavailable, so no GpuMlp object can exist and the member functions below are unreachable.
#include "functions/swiglu-mlp/gpu_mlp.h"

namespace swiglu {
namespace {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

std::unexpected<junction::Error> NoCuda() {
  return MakeError(
      ErrorCode::kUnavailable,
      "this faasnode was built without CUDA (FAASNODE_CUDA=OFF, or CMake found no nvcc), so "
      "the GPU SwiGLU kernels are absent; the CPU path serves instead. To use a GPU, "
      "install the CUDA toolkit and reconfigure with -DFAASNODE_CUDA=ON");
}

}  // namespace

struct GpuMlp::Impl {
  GpuDeviceInfo device;
  MlpShape shape;
};

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

Status<GpuDeviceInfo> GpuMlp::Probe(int) {
  return NoCuda();
}
Status<GpuMlp> GpuMlp::Create(const MlpShape&, const GpuMlpOptions&) {
  return NoCuda();
}
GpuMlp::GpuMlp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuMlp::GpuMlp(GpuMlp&&) noexcept = default;
GpuMlp& GpuMlp::operator=(GpuMlp&&) noexcept = default;
GpuMlp::~GpuMlp() = default;
const GpuDeviceInfo& GpuMlp::device() const {
  return impl_->device;
}
const MlpShape& GpuMlp::shape() const {
  return impl_->shape;
}
int GpuMlp::tokens() const {
  return 0;
}
bool GpuMlp::Supports(GpuGateUp) const {
  return false;
}
Status<void> GpuMlp::UploadWeights(const MlpWeights&) {
  return NoCuda();
}
Status<void> GpuMlp::GenerateWeights(uint64_t) {
  return NoCuda();
}
Status<void> GpuMlp::UploadInput(std::span<const Bf16>, int) {
  return NoCuda();
}
Status<void> GpuMlp::GenerateInput(uint64_t, int) {
  return NoCuda();
}
Status<void> GpuMlp::GateUp(GpuGateUp) {
  return NoCuda();
}
Status<void> GpuMlp::Down() {
  return NoCuda();
}
Status<GpuForwardResult> GpuMlp::Forward(GpuGateUp) {
  return NoCuda();
}
Status<float> GpuMlp::TimeGateUp(GpuGateUp, int, int) {
  return NoCuda();
}
Status<float> GpuMlp::TimeReferenceGemm(int, int) {
  return NoCuda();
}
Status<std::vector<Bf16>> GpuMlp::ReadH() const {
  return NoCuda();
}
Status<std::vector<Bf16>> GpuMlp::ReadY() const {
  return NoCuda();
}
Status<ReferenceResult> GpuMlp::ReferenceGateUpRows(std::span<const int>) const {
  return NoCuda();
}

}  // namespace swiglu
