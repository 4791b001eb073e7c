// burn.h — the cpu-burn load: a fixed amount of integer work per round, impossible to skip.
//
// One round is 2000 steps of Marsaglia's xorshift64 (13, 7, 17) on a running 64-bit state —
// the same unit the energy tests burn (energy/attribution/attribution_test.cc, Burn). The
// state after the last round depends on every step, so a caller that uses the result keeps
// the compiler from removing the work. Pure; safe from any thread.
#pragma once

#include <cstdint>

namespace faasnode::functions {

inline constexpr std::uint64_t kBurnStepsPerRound = 2000;
inline constexpr std::uint64_t kBurnSeed = 0x9e3779b97f4a7c15;  // the golden-ratio constant

// Runs `rounds` rounds from `state` and returns the final state; rounds compose:
// BurnRounds(a + b, s) == BurnRounds(b, BurnRounds(a, s)). `state` must be non-zero (0 is
// xorshift's fixed point); a non-zero state stays non-zero.
constexpr std::uint64_t BurnRounds(std::uint64_t rounds, std::uint64_t state = kBurnSeed) {
  std::uint64_t x = state;
  for (std::uint64_t i = 0; i < rounds * kBurnStepsPerRound; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

}  // namespace faasnode::functions
