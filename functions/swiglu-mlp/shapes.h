// shapes.h — MLP shapes (hidden, intermediate) of every Qwen-2.5 size, and lookup by name.
//
//   auto shape = swiglu::QwenShape("7B");   // {3584, 18944}
//   if (!shape) return shape.error();
//
// Plain values and constants; QwenShape is thread-safe and does not block.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "junction/base/error.h"

namespace swiglu {

// One SwiGLU MLP: X[tokens, hidden] -> H[tokens, intermediate] -> Y[tokens, hidden].
// Weights are stored as PyTorch Linear weights (row-major [out_features, in_features]):
// gate and up are [intermediate, hidden], down is [hidden, intermediate].
struct MlpShape {
  std::string_view name;  // "0.5B" ... "72B", or "custom" for test sub-shapes
  int hidden = 0;         // K of the gate/up GEMMs
  int intermediate = 0;   // N of the gate/up GEMMs, K of the down GEMM

  friend bool operator==(const MlpShape& a, const MlpShape& b) {
    return a.hidden == b.hidden && a.intermediate == b.intermediate;
  }
};

// A shape that is not a Qwen size (tests use sub-shapes with tails); both sizes must be > 0.
inline MlpShape CustomShape(int hidden, int intermediate) {
  return MlpShape{"custom", hidden, intermediate};
}

// config.json of Qwen/Qwen2.5-*: hidden_size, intermediate_size.
inline constexpr std::array<MlpShape, 7> kQwen25Shapes = {{
    {"0.5B", 896, 4864},
    {"1.5B", 1536, 8960},
    {"3B", 2048, 11008},
    {"7B", 3584, 18944},
    {"14B", 5120, 13824},
    {"32B", 5120, 27648},
    {"72B", 8192, 29568},
}};

// The Qwen-2.5 shape called `name` ("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B"; case
// and a leading "Qwen2.5-" are ignored). kNotFound lists the valid names.
junction::Status<MlpShape> QwenShape(std::string_view name);

}  // namespace swiglu
