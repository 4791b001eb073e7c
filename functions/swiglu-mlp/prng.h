// prng.h — the counter-based generator behind seeded weights and activations.
//
// Value i of stream s under seed S is a pure function of (S, s, i), so tensors can be filled in
// any order, by any number of threads, on the host or on a CUDA device, with bit-identical
// results. The generator:
//   h  = SplitMix64(SplitMix64(S ^ (s << 32)) + i)            (Steele, Lea, Flood 2014 finaliser)
//   z  = (a + b + c + d - 2 * 65535) * sqrt(3) / 65536          a..d: the four 16-bit words of h
// z is an Irwin-Hall(4) variate: mean 0, variance ~1, bounded by +-3.46, close to N(0, 1); the
// sum is an exact integer and the scaling one fp32 multiply, so no libm call can make host and
// device disagree. Weights are bf16(0.02 * z) (std 0.02, the Qwen/Llama init scale), token
// activations bf16(z) (RMS-normalised hidden states are O(1)).
#pragma once

#include <cstdint>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/hostdevice.h"

namespace swiglu {

// Streams of the seeded tensors; part of the format of "seeded weights", do not renumber.
enum PrngStream : uint32_t {
  kStreamGate = 1,
  kStreamUp = 2,
  kStreamDown = 3,
  kStreamActivations = 4,
};

inline constexpr float kWeightStd = 0.02f;
inline constexpr float kActivationStd = 1.0f;

SWIGLU_HD uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SWIGLU_HD uint64_t StreamKey(uint64_t seed, uint32_t stream) {
  return SplitMix64(seed ^ (static_cast<uint64_t>(stream) << 32));
}

// std * z for element i of the stream keyed by StreamKey(seed, stream).
SWIGLU_HD float SeededValue(uint64_t key, uint64_t i, float std_dev) {
  uint64_t h = SplitMix64(key + i);
  int32_t sum = static_cast<int32_t>(h & 0xffff) + static_cast<int32_t>((h >> 16) & 0xffff) +
                static_cast<int32_t>((h >> 32) & 0xffff) + static_cast<int32_t>(h >> 48);
  // sqrt(3)/65536 = 2.6428696e-05; std_dev * that is one fp32 product of two constants.
  return static_cast<float>(sum - 2 * 65535) * (std_dev * 2.64286961e-05f);
}

SWIGLU_HD Bf16 SeededBf16(uint64_t key, uint64_t i, float std_dev) {
  return Bf16FromFloat(SeededValue(key, i, std_dev));
}

}  // namespace swiglu
