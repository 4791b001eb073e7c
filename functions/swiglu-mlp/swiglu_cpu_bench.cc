// swiglu_cpu_bench.cc — CPU gate/up: fused AVX2 kernel vs unfused-style vs fp64 reference.
//
// Run: build-swiglu/functions/swiglu-mlp/swiglu_cpu_bench [--benchmark_filter=...]
// Arguments of each benchmark: tokens (M), threads. The shape is Qwen2.5-0.5B (896 -> 4864).
// Counters: TFLOP/s of the dual GEMM (2 * 2*M*N*K flops per call).
#include <benchmark/benchmark.h>

#include <vector>

#include "functions/swiglu-mlp/cpu_kernel.h"
#include "functions/swiglu-mlp/reference.h"
#include "functions/swiglu-mlp/shapes.h"
#include "functions/swiglu-mlp/weights.h"

namespace swiglu {
namespace {

const MlpWeights& Weights() {
  static const MlpWeights w = MakeSeededWeights(kQwen25Shapes[0], 1);
  return w;
}

void SetCounters(benchmark::State& state, int tokens) {
  const MlpShape& s = kQwen25Shapes[0];
  double flops = 4.0 * tokens * s.intermediate * s.hidden;
  state.counters["TFLOP/s"] =
      benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
}

template <auto Kernel>
void BM_GateUp(benchmark::State& state, CpuIsa isa) {
  const int tokens = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const MlpWeights& w = Weights();
  std::vector<Bf16> x = MakeSeededActivations(tokens, w.shape.hidden, 2);
  std::vector<Bf16> h(static_cast<size_t>(tokens) * w.shape.intermediate);
  for (auto _ : state) {
    auto ok = Kernel(x, tokens, w, h, CpuOptions{.threads = threads, .isa = isa});
    if (!ok) state.SkipWithError(ok.error().message().c_str());
    benchmark::DoNotOptimize(h.data());
  }
  SetCounters(state, tokens);
}

void BM_FusedAvx2(benchmark::State& state) {
  BM_GateUp<FusedGateUpCpu>(state, CpuIsa::kAvx2Fma);
}
void BM_FusedScalar(benchmark::State& state) {
  BM_GateUp<FusedGateUpCpu>(state, CpuIsa::kScalar);
}
void BM_UnfusedAvx2(benchmark::State& state) {
  BM_GateUp<UnfusedGateUpCpu>(state, CpuIsa::kAvx2Fma);
}

void BM_ReferenceFp64(benchmark::State& state) {
  const int tokens = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const MlpWeights& w = Weights();
  std::vector<Bf16> x = MakeSeededActivations(tokens, w.shape.hidden, 2);
  for (auto _ : state) {
    ReferenceResult r = ReferenceGateUp(x, tokens, w, threads);
    benchmark::DoNotOptimize(r.value.data());
  }
  SetCounters(state, tokens);
}

void Args(benchmark::internal::Benchmark* b) {
  for (int tokens : {1, 16, 64}) b->Args({tokens, 2});
  b->Args({16, 1});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_FusedAvx2)->Apply(Args);
BENCHMARK(BM_UnfusedAvx2)->Apply(Args);
BENCHMARK(BM_FusedScalar)->Apply(Args);
BENCHMARK(BM_ReferenceFp64)
    ->Args({1, 2})
    ->Args({16, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace swiglu

BENCHMARK_MAIN();
