// weights.cc — seeded weights and activations, and the Qwen layer layout in safetensors files.
#include "functions/swiglu-mlp/weights.h"

#include "functions/swiglu-mlp/parallel_for.h"
#include "functions/swiglu-mlp/prng.h"
#include "functions/swiglu-mlp/safetensors.h"

namespace swiglu {
namespace {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

void FillSeeded(std::vector<Bf16>& out, uint64_t seed, uint32_t stream, float std_dev,
                int threads) {
  constexpr int64_t kBlock = 1 << 16;
  const uint64_t key = StreamKey(seed, stream);
  const int64_t n = static_cast<int64_t>(out.size());
  ParallelFor((n + kBlock - 1) / kBlock, threads, [&](int64_t b) {
    int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) out[i] = SeededBf16(key, i, std_dev);
  });
}

}  // namespace

MlpWeights MakeSeededWeights(const MlpShape& shape, uint64_t seed, int threads) {
  MlpWeights w;
  w.shape = shape;
  const size_t count = static_cast<size_t>(shape.hidden) * shape.intermediate;
  w.gate.resize(count);
  w.up.resize(count);
  w.down.resize(count);
  FillSeeded(w.gate, seed, kStreamGate, kWeightStd, threads);
  FillSeeded(w.up, seed, kStreamUp, kWeightStd, threads);
  FillSeeded(w.down, seed, kStreamDown, kWeightStd, threads);
  return w;
}

std::vector<Bf16> MakeSeededActivations(int tokens, int hidden, uint64_t seed) {
  std::vector<Bf16> x(static_cast<size_t>(tokens) * hidden);
  FillSeeded(x, seed, kStreamActivations, kActivationStd, 1);
  return x;
}

std::string GateProjName(int layer) {
  return "model.layers." + std::to_string(layer) + ".mlp.gate_proj.weight";
}
std::string UpProjName(int layer) {
  return "model.layers." + std::to_string(layer) + ".mlp.up_proj.weight";
}
std::string DownProjName(int layer) {
  return "model.layers." + std::to_string(layer) + ".mlp.down_proj.weight";
}

Status<MlpWeights> LoadSafetensorsWeights(const std::string& path, const MlpShape& shape,
                                          int layer) {
  auto reader = SafetensorsReader::Open(path);
  if (!reader) return std::unexpected(reader.error());
  const int64_t gate_shape[2] = {shape.intermediate, shape.hidden};
  const int64_t down_shape[2] = {shape.hidden, shape.intermediate};
  MlpWeights w;
  w.shape = shape;
  struct Want {
    std::string name;
    std::span<const int64_t> shape;
    std::vector<Bf16>* out;
  };
  const Want wants[3] = {{GateProjName(layer), gate_shape, &w.gate},
                         {UpProjName(layer), gate_shape, &w.up},
                         {DownProjName(layer), down_shape, &w.down}};
  for (const Want& want : wants) {
    if (!reader->tensors().contains(want.name)) {
      std::string have;
      for (const auto& [name, info] : reader->tensors()) {
        if (name.find(".mlp.") == std::string::npos) continue;
        if (have.size() > 400) {
          have += ", ...";
          break;
        }
        have += (have.empty() ? "" : ", ") + name;
      }
      return MakeError(
          ErrorCode::kNotFound,
          "'" + path + "' has no tensor '" + want.name + "' (layer " + std::to_string(layer) +
              "); MLP tensors present: " + (have.empty() ? std::string("none") : have) +
              ". Pick a layer the file holds or another file.");
    }
    auto data = reader->ReadBf16(want.name, want.shape);
    if (!data) return std::unexpected(data.error());
    *want.out = std::move(*data);
  }
  return w;
}

Status<void> SaveSafetensorsWeights(const std::string& path, const MlpWeights& weights, int layer) {
  const MlpShape& s = weights.shape;
  const SafetensorsBf16View views[3] = {
      {GateProjName(layer), {s.intermediate, s.hidden}, weights.gate},
      {UpProjName(layer), {s.intermediate, s.hidden}, weights.up},
      {DownProjName(layer), {s.hidden, s.intermediate}, weights.down},
  };
  return WriteSafetensorsBf16(path, views);
}

}  // namespace swiglu
