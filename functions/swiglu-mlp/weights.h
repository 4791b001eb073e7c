// weights.h — MLP weights in host memory: made from a seed, or read from/written to safetensors.
//
// Seeded tensors follow prng.h exactly (documented generator, std 0.02 for weights, 1 for
// activations), so the same seed gives the same bits on every machine and on a CUDA device.
// Safetensors files hold Qwen-style names: model.layers.<L>.mlp.{gate,up,down}_proj.weight,
// dtype BF16, gate/up [intermediate, hidden], down [hidden, intermediate].
//
// All functions are thread-safe (no shared state); they block on file I/O where they read or
// write files. MlpWeights is a plain value that owns its vectors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/shapes.h"
#include "junction/base/error.h"

namespace swiglu {

struct MlpWeights {
  MlpShape shape;
  std::vector<Bf16> gate;  // [intermediate, hidden], row-major
  std::vector<Bf16> up;    // [intermediate, hidden], row-major
  std::vector<Bf16> down;  // [hidden, intermediate], row-major
};

// Deterministic weights for `shape` from `seed` (streams kStreamGate/Up/Down). `threads` as in
// ParallelFor (0 = all cores).
MlpWeights MakeSeededWeights(const MlpShape& shape, uint64_t seed, int threads = 0);

// Deterministic activations X[tokens, hidden] from `seed` (stream kStreamActivations).
std::vector<Bf16> MakeSeededActivations(int tokens, int hidden, uint64_t seed);

// The tensor names of layer `layer`.
std::string GateProjName(int layer);
std::string UpProjName(int layer);
std::string DownProjName(int layer);

// Reads layer `layer`'s three MLP weights from the safetensors file at `path` and checks them
// against `shape`. Errors: kIo (cannot open/read), kInvalidArgument (malformed file, wrong
// dtype or shape; the message names the tensor and what was expected), kNotFound (a tensor is
// missing; the message lists the MLP tensors the file does have).
junction::Status<MlpWeights> LoadSafetensorsWeights(const std::string& path, const MlpShape& shape,
                                                    int layer = 0);

// Writes `weights` as layer `layer` of a new safetensors file at `path` (replaced if present).
junction::Status<void> SaveSafetensorsWeights(const std::string& path, const MlpWeights& weights,
                                              int layer = 0);

}  // namespace swiglu
