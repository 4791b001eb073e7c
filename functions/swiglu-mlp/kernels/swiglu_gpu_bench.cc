// swiglu_gpu_bench.cc — GPU gate/up benchmark: fused (both sm_90a schedules, sm_80) vs unfused
// cuBLAS, with % of a same-FLOPs cuBLAS bf16 GEMM measured in the same run, and mismatch rates
// against the fp64 reference on sampled rows. Prints a markdown table; --csv writes the rows.
//
//   swiglu_gpu_bench [--shapes 0.5B,72B|all] [--tokens 1,16,128,1024,4096] [--iters 20]
//                    [--sample-rows 4] [--impls reference,fused-sm80,...] [--csv out.csv]
// --impls: only these rows ("reference" is the same-FLOPs cuBLAS GEMM row; the GEMM is timed
// in every run, for the % column). scripts/bench-swiglu-gpu.sh runs one implementation per
// process, so that a kernel that hangs or faults (a sticky CUDA error ends the process's
// context) costs only its own rows. CSV rows are flushed as they are written.
// Exit status: 0 on success, 2 for bad arguments, 3 when no CUDA device is usable.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/gpu_mlp.h"
#include "functions/swiglu-mlp/reference.h"
#include "functions/swiglu-mlp/shapes.h"

namespace swiglu {
namespace {

struct Args {
  std::vector<MlpShape> shapes;
  std::vector<int> tokens = {1, 16, 128, 1024, 4096};
  int iters = 20;
  int sample_rows = 4;
  std::vector<std::string> impls;  // empty: all
  std::string csv;

  bool Wants(std::string_view impl) const {
    return impls.empty() || std::find(impls.begin(), impls.end(), impl) != impls.end();
  }
};

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    if (comma > start) out.emplace_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool ParseArgs(int argc, char** argv, Args* a) {
  std::string shapes = "all";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) return "";
      return argv[++i];
    };
    if (arg == "--shapes") {
      shapes = value();
    } else if (arg == "--tokens") {
      a->tokens.clear();
      for (const std::string& t : Split(value())) a->tokens.push_back(std::atoi(t.c_str()));
    } else if (arg == "--iters") {
      a->iters = std::atoi(value().c_str());
    } else if (arg == "--sample-rows") {
      a->sample_rows = std::atoi(value().c_str());
    } else if (arg == "--impls") {
      a->impls = Split(value());
    } else if (arg == "--csv") {
      a->csv = value();
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      return false;
    }
  }
  if (shapes == "all") {
    a->shapes.assign(kQwen25Shapes.begin(), kQwen25Shapes.end());
  } else {
    for (const std::string& name : Split(shapes)) {
      auto s = QwenShape(name);
      if (!s) {
        std::fprintf(stderr, "%s\n", s.error().message().c_str());
        return false;
      }
      a->shapes.push_back(*s);
    }
  }
  for (int t : a->tokens) {
    if (t < 1 || t > 65536) {
      std::fprintf(stderr, "--tokens values must be in 1..65536\n");
      return false;
    }
  }
  for (const std::string& impl : a->impls) {
    bool known = impl == "reference";
    for (GpuGateUp v : kAllGpuGateUp) known = known || impl == GpuGateUpName(v);
    if (!known) {
      std::fprintf(stderr, "unknown --impls entry '%s'\n", impl.c_str());
      return false;
    }
  }
  return !a->tokens.empty() && a->iters > 0 && a->sample_rows > 0;
}

// The sampled rows of H, row-major, in the order of `rows`.
std::vector<Bf16> SampleRows(const std::vector<Bf16>& h, int n, const std::vector<int>& rows) {
  std::vector<Bf16> out;
  out.reserve(rows.size() * n);
  for (int r : rows) {
    out.insert(out.end(), h.begin() + static_cast<size_t>(r) * n,
               h.begin() + static_cast<size_t>(r + 1) * n);
  }
  return out;
}

int Run(const Args& args) {
  auto probe = GpuMlp::Probe(0);
  if (!probe) {
    std::fprintf(stderr, "swiglu_gpu_bench: %s\n", probe.error().message().c_str());
    return 3;
  }
  std::FILE* csv = nullptr;
  if (!args.csv.empty()) {
    csv = std::fopen(args.csv.c_str(), "w");
    if (!csv) {
      std::perror(args.csv.c_str());
      return 2;
    }
    std::fprintf(csv,
                 "shape,tokens,impl,us,tflops,pct_cublas,mismatch_rate,beyond_tol,max_err_ulp\n");
  }
  std::printf("device: %s (sm_%d%d, %d SMs)\n\n", probe->name.c_str(), probe->cc_major,
              probe->cc_minor, probe->sm_count);
  std::printf(
      "| shape | M | impl | µs | TFLOP/s | %% of cuBLAS GEMM | mismatch | beyond tol | max err "
      "(ulp) |\n");
  std::printf("|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
  const int max_tokens = *std::max_element(args.tokens.begin(), args.tokens.end());
  for (const MlpShape& shape : args.shapes) {
    auto mlp = GpuMlp::Create(shape, {.max_tokens = max_tokens});
    if (!mlp) {
      std::fprintf(stderr, "%s: %s\n", std::string(shape.name).c_str(),
                   mlp.error().message().c_str());
      return 3;
    }
    if (auto ok = mlp->GenerateWeights(1); !ok) {
      std::fprintf(stderr, "%s\n", ok.error().message().c_str());
      return 3;
    }
    for (int m : args.tokens) {
      if (auto ok = mlp->GenerateInput(2, m); !ok) {
        std::fprintf(stderr, "%s\n", ok.error().message().c_str());
        return 3;
      }
      std::vector<int> rows;
      int want = std::min(args.sample_rows, m);
      for (int r = 0; r < want; ++r) rows.push_back(static_cast<int>((int64_t)r * m / want));
      auto ref = mlp->ReferenceGateUpRows(rows);
      if (!ref) {
        std::fprintf(stderr, "%s\n", ref.error().message().c_str());
        return 3;
      }
      const double flops = 4.0 * m * shape.intermediate * shape.hidden;
      const int warmup = std::max(2, args.iters / 5);
      auto ref_us = mlp->TimeReferenceGemm(warmup, args.iters);
      if (!ref_us) {
        std::fprintf(stderr, "%s\n", ref_us.error().message().c_str());
        return 3;
      }
      const double ref_tflops = flops / (*ref_us * 1e-6) * 1e-12;
      auto emit = [&](std::string_view impl, double us, const MatchStats* mm) {
        double tflops = flops / (us * 1e-6) * 1e-12;
        double pct = 100.0 * tflops / ref_tflops;
        char mism[32] = "-", beyond[32] = "-", ulps[32] = "-";
        if (mm) {
          std::snprintf(mism, sizeof mism, "%.4f%%", 100.0 * (1.0 - mm->ExactRate()));
          std::snprintf(beyond, sizeof beyond, "%lld",
                        static_cast<long long>(mm->total - mm->within_tolerance));
          std::snprintf(ulps, sizeof ulps, "%.2f", mm->max_error_ulps);
        }
        std::printf("| %s | %d | %s | %.1f | %.1f | %.1f | %s | %s | %s |\n",
                    std::string(shape.name).c_str(), m, std::string(impl).c_str(), us, tflops, pct,
                    mism, beyond, ulps);
        if (csv) {
          std::fprintf(csv, "%s,%d,%s,%.3f,%.3f,%.2f,", std::string(shape.name).c_str(), m,
                       std::string(impl).c_str(), us, tflops, pct);
          if (mm) {
            std::fprintf(csv, "%.6f,%lld,%.3f\n", 1.0 - mm->ExactRate(),
                         static_cast<long long>(mm->total - mm->within_tolerance),
                         mm->max_error_ulps);
          } else {
            std::fprintf(csv, ",,\n");
          }
          std::fflush(csv);
        }
      };
      if (args.Wants("reference")) emit("cublas-gemm-2N (reference)", *ref_us, nullptr);
      for (GpuGateUp v : kAllGpuGateUp) {
        if (!args.Wants(GpuGateUpName(v))) continue;
        if (!mlp->Supports(v)) {
          std::fprintf(stderr, "%s: not supported on %s, skipped\n",
                       std::string(GpuGateUpName(v)).c_str(), probe->name.c_str());
          continue;
        }
        auto us = mlp->TimeGateUp(v, warmup, args.iters);
        if (!us) {
          std::fprintf(stderr, "%s: %s\n", std::string(GpuGateUpName(v)).c_str(),
                       us.error().message().c_str());
          return 3;
        }
        auto run = mlp->GateUp(v);
        auto h = run ? mlp->ReadH() : std::unexpected(run.error());
        if (!h) {
          std::fprintf(stderr, "%s\n", h.error().message().c_str());
          return 3;
        }
        MatchStats mm = Compare(SampleRows(*h, shape.intermediate, rows), *ref);
        emit(GpuGateUpName(v), *us, &mm);
      }
      std::fflush(stdout);
    }
  }
  if (csv) std::fclose(csv);
  return 0;
}

}  // namespace
}  // namespace swiglu

int main(int argc, char** argv) {
  swiglu::Args args;
  if (!swiglu::ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: swiglu_gpu_bench [--shapes all|0.5B,...] [--tokens 1,16,...] "
                 "[--iters N] [--sample-rows N] [--impls reference,fused-sm80,...] "
                 "[--csv FILE]\n");
    return 2;
  }
  return swiglu::Run(args);
}
