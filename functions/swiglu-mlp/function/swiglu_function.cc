// swiglu_function.cc — the swiglu-mlp function: Y = SwiGLU MLP(X) for a Qwen-2.5 size.
//
// POST X as JSON or raw bf16/f32 (codec.h); the answer is Y in the same form. Model sizes:
// 0.5B, 1.5B, 3B, 7B, 14B, 32B, 72B (?model= / X-Swiglu-Model / "model"; default
// SWIGLU_DEFAULT_MODEL). Environment (the deployment's env), all optional:
//   SWIGLU_DEFAULT_MODEL  the model when a request names none; built at init (default 0.5B)
//   SWIGLU_SEED           seed of the deterministic weights (prng.h; default 1)
//   SWIGLU_WEIGHTS        a safetensors file (Qwen names, bf16) instead of seeded weights: the
//                         instance then serves only the model whose shape the file holds
//   SWIGLU_LAYER          which layer's MLP to read from SWIGLU_WEIGHTS (default 0)
//   SWIGLU_MAX_WEIGHT_MB  weights held at once, MiB (default 1024: every size up to 32B; 72B
//                         needs 1386 MiB); a model above it alone is refused with 422, others
//                         are built on first use and the least recently used is dropped
//   SWIGLU_MAX_TOKENS     tokens per call (default 256, at most 8192); more: 400
//   SWIGLU_DEVICE         auto (GPU when one is present, default) | cpu | gpu (init fails
//                         without one)
//   SWIGLU_CPU_THREADS    threads of the CPU path (default 0 = every hardware thread)
// Response headers: X-Swiglu-Path (cpu-avx2, cpu-scalar, gpu-fused-sm90-overlap, ...),
// X-Swiglu-Model, X-Swiglu-Compute-Seconds, and on the GPU path X-Gpu-Time-Us (CUDA events,
// gate/up + down) and X-Gpu-Joules (NVML, also billed to the invocation in zone gpu).
//
// Threads: requests may run concurrently. The model table is guarded by a std::mutex held only
// for map operations; waits (a model being built by another call, the GPU in use) park the
// uthread with SleepFor, never the kthread. The computation itself does block its kthread: the
// CPU path for its whole duration (plus SWIGLU_CPU_THREADS-1 helper threads started for the
// call, whose cycles are outside the node's accounting and so are not billed to the call),
// the GPU path while its stream runs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <expected>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "faasnode/function.h"
#include "functions/swiglu-mlp/cpu_kernel.h"
#include "functions/swiglu-mlp/function/codec.h"
#include "functions/swiglu-mlp/function/gpu_energy.h"
#include "functions/swiglu-mlp/gpu_mlp.h"
#include "functions/swiglu-mlp/parallel_for.h"
#include "functions/swiglu-mlp/safetensors.h"
#include "functions/swiglu-mlp/shapes.h"
#include "functions/swiglu-mlp/weights.h"

namespace {

using faasnode::sdk::Env;
using faasnode::sdk::LogLevel;
using faasnode::sdk::Request;
using faasnode::sdk::Response;
using namespace std::chrono_literals;

constexpr int kMaxTokensCeiling = 8192;

std::uint64_t WeightBytes(const swiglu::MlpShape& s) {
  return std::uint64_t{3} * 2 * static_cast<std::uint64_t>(s.hidden) * s.intermediate;
}
double Mib(std::uint64_t b) {
  return static_cast<double>(b) / (1 << 20);
}

struct Config {
  swiglu::MlpShape default_model;
  std::uint64_t seed = 1;
  std::string weights_path;
  int layer = 0;
  std::uint64_t max_weight_bytes = std::uint64_t{1024} << 20;
  int max_tokens = 256;
  std::string device = "auto";
  int cpu_threads = 0;
};

std::uint64_t ParseEnvUint(const Env& env, std::string_view name, std::uint64_t dflt,
                           std::uint64_t lo, std::uint64_t hi) {
  std::optional<std::string_view> v = env.Var(name);
  if (!v) return dflt;
  std::optional<std::uint64_t> n = faasnode::sdk::ParseUint(*v);
  if (!n || *n < lo || *n > hi) {
    throw std::invalid_argument(fmt::format("{}={}: expected an integer from {} to {}", name,
                                            *v, lo, hi));
  }
  return *n;
}

Config ReadConfig(const Env& env) {
  Config c;
  auto model = swiglu::QwenShape(env.Var("SWIGLU_DEFAULT_MODEL").value_or("0.5B"));
  if (!model) throw std::invalid_argument("SWIGLU_DEFAULT_MODEL: " + model.error().message());
  c.default_model = *model;
  c.seed = ParseEnvUint(env, "SWIGLU_SEED", 1, 0, UINT64_MAX);
  c.weights_path = std::string(env.Var("SWIGLU_WEIGHTS").value_or(""));
  c.layer = static_cast<int>(ParseEnvUint(env, "SWIGLU_LAYER", 0, 0, 1000));
  c.max_weight_bytes = ParseEnvUint(env, "SWIGLU_MAX_WEIGHT_MB", 1024, 1, 1 << 20) << 20;
  c.max_tokens = static_cast<int>(ParseEnvUint(env, "SWIGLU_MAX_TOKENS", 256, 1, kMaxTokensCeiling));
  c.device = std::string(env.Var("SWIGLU_DEVICE").value_or("auto"));
  if (c.device != "auto" && c.device != "cpu" && c.device != "gpu") {
    throw std::invalid_argument("SWIGLU_DEVICE=" + c.device + ": use auto, cpu or gpu");
  }
  c.cpu_threads = static_cast<int>(ParseEnvUint(env, "SWIGLU_CPU_THREADS", 0, 0, 1024));
  return c;
}

// One model's weights, on the host (CPU path) or on the device (GPU path).
struct Model {
  swiglu::MlpShape shape;
  std::uint64_t bytes = 0;
  std::atomic<int> state{0};  // 0 building, 1 ready, 2 failed
  std::string error;          // when failed
  double load_seconds = 0;
  swiglu::MlpWeights host;
  std::optional<swiglu::GpuMlp> gpu;
  std::atomic_flag gpu_busy;  // one call on the GpuMlp at a time
};

// An HTTP error to answer with.
struct Refusal {
  int status;
  std::string message;
};

class SwigluMlp {
 public:
  explicit SwigluMlp(const Env& env) : config_(ReadConfig(env)) {
    if (!config_.weights_path.empty()) {
      // The file decides the one model this instance serves.
      auto reader = swiglu::SafetensorsReader::Open(config_.weights_path);
      if (!reader) throw std::runtime_error("SWIGLU_WEIGHTS: " + reader.error().message());
      auto it = reader->tensors().find(swiglu::GateProjName(config_.layer));
      if (it == reader->tensors().end() || it->second.shape.size() != 2) {
        throw std::runtime_error(fmt::format("SWIGLU_WEIGHTS={}: no 2-D tensor {} (layer {})",
                                             config_.weights_path,
                                             swiglu::GateProjName(config_.layer), config_.layer));
      }
      const auto& dims = it->second.shape;
      const auto match = std::ranges::find_if(swiglu::kQwen25Shapes, [&](const auto& s) {
        return s.intermediate == dims[0] && s.hidden == dims[1];
      });
      if (match == swiglu::kQwen25Shapes.end()) {
        throw std::runtime_error(fmt::format(
            "SWIGLU_WEIGHTS={}: {} is [{}, {}], which is no Qwen-2.5 MLP shape",
            config_.weights_path, it->first, dims[0], dims[1]));
      }
      config_.default_model = *match;
      file_model_ = match->name;
    }
    if (config_.device != "cpu") {
      auto probe = swiglu::GpuMlp::Probe(0);
      if (probe) {
        gpu_ = *probe;
        auto meter = swiglu::GpuEnergyCounter::Open(probe->pci_bus_id);
        if (meter) {
          meter_.emplace(std::move(*meter));
        } else {
          env.Log(LogLevel::kWarn, "no GPU energy figures: " + meter.error().message());
        }
      } else if (config_.device == "gpu") {
        throw std::runtime_error("SWIGLU_DEVICE=gpu: " + probe.error().message());
      }
    }
    if (WeightBytes(config_.default_model) > config_.max_weight_bytes) {
      throw std::runtime_error(TooLarge(config_.default_model).message);
    }
    env.Log(LogLevel::kInfo,
            fmt::format("swiglu-mlp: {} path, default model {}, weights {} (limit {:.0f} MiB)",
                        gpu_ ? "gpu (" + gpu_->name + ")" : "cpu", config_.default_model.name,
                        file_model_.empty() ? fmt::format("seeded {}", config_.seed)
                                            : config_.weights_path,
                        Mib(config_.max_weight_bytes)));
    auto m = Acquire(config_.default_model, nullptr);
    if (!m) throw std::runtime_error(m.error().message);
  }

  void Handle(const Request& req, Response& resp) {
    const bool binary =
        req.Header("Content-Type").value_or("").starts_with("application/octet-stream");
    resp.Header("Content-Type", binary ? "application/octet-stream" : "application/json");
    if (auto r = Serve(req, resp, binary); !r) {
      resp.Status(r.error().status);
      resp.Write(swiglu::ErrorJson(r.error().message));
    }
  }

 private:
  using Result = std::expected<void, Refusal>;

  static Refusal Bad(std::string m) { return {400, std::move(m)}; }

  Refusal TooLarge(const swiglu::MlpShape& s) const {
    std::string fits;
    for (const auto& q : swiglu::kQwen25Shapes) {
      if (WeightBytes(q) <= config_.max_weight_bytes) fits = std::string(q.name);
    }
    return {422, fmt::format("model {} needs {:.0f} MiB of bf16 weights; this instance holds at "
                             "most {:.0f} MiB (SWIGLU_MAX_WEIGHT_MB{}): raise "
                             "SWIGLU_MAX_WEIGHT_MB in the function's env",
                             s.name, Mib(WeightBytes(s)), Mib(config_.max_weight_bytes),
                             fits.empty() ? "" : ", enough for sizes up to " + fits)};
  }

  std::expected<swiglu::MlpShape, Refusal> ResolveModel(std::string_view name) const {
    if (name.empty()) return config_.default_model;
    auto shape = swiglu::QwenShape(name);
    if (!shape) return std::unexpected(Bad(shape.error().message()));
    if (!file_model_.empty() && shape->name != file_model_) {
      return std::unexpected(Refusal{
          422, fmt::format("this instance serves only model {} (the shape of SWIGLU_WEIGHTS={}); "
                           "deploy another instance for {}",
                           file_model_, config_.weights_path, shape->name)});
    }
    if (WeightBytes(*shape) > config_.max_weight_bytes) {
      return std::unexpected(TooLarge(*shape));
    }
    return *shape;
  }

  // Builds the weights of `shape` (the caller is its only builder).
  void Build(Model& m) const {
    const auto t0 = std::chrono::steady_clock::now();
    junction::Status<void> ok;
    if (gpu_) {
      auto g = swiglu::GpuMlp::Create(m.shape, {.device = 0, .max_tokens = config_.max_tokens});
      if (!g) {
        ok = std::unexpected(g.error());
      } else {
        if (file_model_.empty()) {
          ok = g->GenerateWeights(config_.seed);
        } else {
          auto w = swiglu::LoadSafetensorsWeights(config_.weights_path, m.shape, config_.layer);
          ok = w ? g->UploadWeights(*w) : junction::Status<void>(std::unexpected(w.error()));
        }
        if (ok) m.gpu.emplace(std::move(*g));
      }
    } else if (file_model_.empty()) {
      m.host = swiglu::MakeSeededWeights(m.shape, config_.seed, config_.cpu_threads);
    } else {
      auto w = swiglu::LoadSafetensorsWeights(config_.weights_path, m.shape, config_.layer);
      if (w) {
        m.host = std::move(*w);
      } else {
        ok = std::unexpected(w.error());
      }
    }
    m.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ok) m.error = fmt::format("cannot load model {}: {}", m.shape.name, ok.error().message());
    m.state.store(ok ? 1 : 2, std::memory_order_release);
  }

  // The ready model `shape`, built now if absent (evicting the least recently used models that
  // no call holds until it fits). `req` (null during init) is used to park while waiting.
  std::expected<std::shared_ptr<Model>, Refusal> Acquire(const swiglu::MlpShape& shape,
                                                         const Request* req) {
    std::shared_ptr<Model> m;
    bool build = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = models_.find(std::string(shape.name));
      if (it != models_.end()) {
        m = it->second;
        lru_.remove(it->first);
        lru_.push_back(it->first);
      } else {
        const std::uint64_t need = WeightBytes(shape);
        for (auto victim = lru_.begin(); held_ + need > config_.max_weight_bytes &&
                                         victim != lru_.end();) {
          auto v = models_.find(*victim);
          if (v->second.use_count() == 1 && v->second->state.load() != 0) {
            held_ -= v->second->bytes;
            models_.erase(v);
            victim = lru_.erase(victim);
          } else {
            ++victim;
          }
        }
        if (held_ + need > config_.max_weight_bytes) {
          return std::unexpected(Refusal{
              503, fmt::format("model {} ({:.0f} MiB) does not fit beside the models calls are "
                               "using now ({:.0f} of {:.0f} MiB, SWIGLU_MAX_WEIGHT_MB); retry",
                               shape.name, Mib(need), Mib(held_),
                               Mib(config_.max_weight_bytes))});
        }
        m = std::make_shared<Model>();
        m->shape = shape;
        m->bytes = need;
        held_ += need;
        models_.emplace(std::string(shape.name), m);
        lru_.push_back(std::string(shape.name));
        build = true;
      }
    }
    if (build) Build(*m);
    while (m->state.load(std::memory_order_acquire) == 0) req->SleepFor(1ms);
    if (m->state.load() == 2) {
      std::lock_guard<std::mutex> l(mu_);
      auto it = models_.find(std::string(shape.name));
      if (it != models_.end() && it->second == m) {  // forget it, so a later call retries
        held_ -= m->bytes;
        models_.erase(it);
        lru_.remove(std::string(shape.name));
      }
      return std::unexpected(Refusal{500, m->error});
    }
    return m;
  }

  Result Serve(const Request& req, Response& resp, bool binary) {
    std::string model_name;
    swiglu::WireDtype dtype = swiglu::WireDtype::kBf16;
    std::vector<swiglu::Bf16> x;
    int tokens = 0;
    std::optional<swiglu::JsonRequest> json;
    if (binary) {
      model_name = req.Query("model").value_or(std::string(req.Header("X-Swiglu-Model").value_or("")));
      std::string d = req.Query("dtype").value_or(std::string(req.Header("X-Swiglu-Dtype").value_or("bf16")));
      auto parsed = swiglu::ParseWireDtype(d);
      if (!parsed) return std::unexpected(Bad(parsed.error().message()));
      dtype = *parsed;
    } else {
      auto parsed = swiglu::ParseJsonRequest(req.body(), config_.max_tokens, "SWIGLU_MAX_TOKENS");
      if (!parsed) return std::unexpected(Bad(parsed.error().message()));
      json = std::move(*parsed);
      model_name = json->model;
      if (model_name.empty()) {
        model_name =
            req.Query("model").value_or(std::string(req.Header("X-Swiglu-Model").value_or("")));
      }
    }
    auto shape = ResolveModel(model_name);
    if (!shape) return std::unexpected(shape.error());
    if (binary) {
      auto parsed = swiglu::ParseBinaryBody(req.body(), shape->hidden, dtype, shape->name, &tokens);
      if (!parsed) return std::unexpected(Bad(parsed.error().message()));
      if (tokens > config_.max_tokens) {
        return std::unexpected(Bad(fmt::format(
            "{} tokens; this instance takes at most {} per call (SWIGLU_MAX_TOKENS): split the "
            "request",
            tokens, config_.max_tokens)));
      }
      x = std::move(*parsed);
    } else {
      auto flat = swiglu::FlattenRows(json->rows, shape->hidden, shape->name);
      if (!flat) return std::unexpected(Bad(flat.error().message()));
      x = std::move(*flat);
      tokens = static_cast<int>(json->rows.size());
    }

    auto model = Acquire(*shape, &req);
    if (!model) return std::unexpected(model.error());
    Model& m = **model;
    std::vector<swiglu::Bf16> y(static_cast<std::size_t>(tokens) * shape->hidden);
    std::string path;
    const auto t0 = std::chrono::steady_clock::now();
    if (m.gpu) {
      while (m.gpu_busy.test_and_set(std::memory_order_acquire)) req.SleepFor(20us);
      auto run = RunGpu(m, x, tokens, resp);
      m.gpu_busy.clear(std::memory_order_release);
      if (!run) return std::unexpected(run.error());
      y = std::move(run->y);
      path = run->path;
    } else {
      const swiglu::CpuIsa isa = swiglu::DetectCpuIsa();
      auto ok = swiglu::MlpForwardCpu(x, tokens, m.host, y,
                                      {.threads = config_.cpu_threads, .isa = isa});
      if (!ok) return std::unexpected(Refusal{500, "CPU MLP: " + ok.error().message()});
      path = isa == swiglu::CpuIsa::kAvx2Fma ? "cpu-avx2" : "cpu-scalar";
      resp.Header("X-Swiglu-Cpu-Threads",
                  std::to_string(swiglu::ResolveThreads(config_.cpu_threads)));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    resp.Header("X-Swiglu-Path", path);
    resp.Header("X-Swiglu-Model", shape->name);
    resp.Header("X-Swiglu-Compute-Seconds", fmt::format("{:.6f}", seconds));
    if (binary) {
      resp.Header("X-Swiglu-Tokens", std::to_string(tokens));
      resp.Header("X-Swiglu-Hidden", std::to_string(shape->hidden));
      resp.Header("X-Swiglu-Dtype", swiglu::WireDtypeName(dtype));
      resp.Write(swiglu::EncodeBinaryReply(y, dtype));
    } else {
      resp.Write(swiglu::EncodeJsonReply(
          {shape->name, shape->hidden, shape->intermediate, tokens, path}, y));
    }
    return {};
  }

  struct GpuRun {
    std::vector<swiglu::Bf16> y;
    std::string path;
  };

  std::expected<GpuRun, Refusal> RunGpu(Model& m, const std::vector<swiglu::Bf16>& x, int tokens,
                                        Response& resp) {
    const swiglu::GpuGateUp variant = m.gpu->Supports(swiglu::GpuGateUp::kFusedSm90Overlap)
                                          ? swiglu::GpuGateUp::kFusedSm90Overlap
                                          : swiglu::GpuGateUp::kFusedSm80;
    if (!m.gpu->Supports(variant)) {
      return std::unexpected(Refusal{503, "GPU " + gpu_->name + " runs neither fused kernel " +
                                              "(needs compute capability 8.0 or newer); set " +
                                              "SWIGLU_DEVICE=cpu"});
    }
    if (auto up = m.gpu->UploadInput(x, tokens); !up) {
      return std::unexpected(Refusal{500, "GPU upload: " + up.error().message()});
    }
    std::optional<std::uint64_t> before;
    if (meter_) {
      if (auto r = meter_->ReadMillijoules()) before = *r;
    }
    auto run = m.gpu->Forward(variant);
    std::optional<std::uint64_t> after;
    if (meter_ && before) {
      if (auto r = meter_->ReadMillijoules()) after = *r;
    }
    if (!run) return std::unexpected(Refusal{500, "GPU MLP: " + run.error().message()});
    resp.Header("X-Gpu-Time-Us", fmt::format("{:.1f}", run->gate_up_us + run->down_us));
    if (before && after && *after >= *before) {
      const double joules = static_cast<double>(*after - *before) / 1000.0;
      resp.Header("X-Gpu-Joules", fmt::format("{:.3f}", joules));
      resp.ReportEnergy(FAASNODE_ENERGY_ZONE_GPU, joules, FAASNODE_ENERGY_SOURCE_NVML);
    }
    return GpuRun{std::move(run->y), "gpu-" + std::string(swiglu::GpuGateUpName(variant))};
  }

  Config config_;
  std::string_view file_model_;  // the one model of SWIGLU_WEIGHTS; empty: seeded weights
  std::optional<swiglu::GpuDeviceInfo> gpu_;
  std::optional<swiglu::GpuEnergyCounter> meter_;  // NVML; absent: no GPU energy figures

  std::mutex mu_;  // guards the three below; held for map operations only
  std::map<std::string, std::shared_ptr<Model>> models_;
  std::list<std::string> lru_;  // least recently used first
  std::uint64_t held_ = 0;      // bytes of the models in models_
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(SwigluMlp, "swiglu-mlp")
