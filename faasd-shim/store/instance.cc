// instance.cc — the host API table (response writer, log, sleep, yield, clock; outbound HTTP
// in host_http.cc) and Instance.
#include "faasd-shim/store/instance.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "faasd-shim/store/host_call.h"
#include "faasd-shim/store/host_http.h"
#include "junction/http/headers.h"
#include "junction/sched/sched.h"

namespace faasnode::store {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

std::string_view View(faasnode_str s) {
  return s.size == 0 ? std::string_view() : std::string_view(s.data, s.size);
}
faasnode_str Str(std::string_view s) {
  return faasnode_str{s.data(), s.size()};
}

int Refuse(faasnode_response* r, ErrorCode code, std::string message, int result) {
  if (r->refusal.empty()) {
    r->refusal_code = code;
    r->refusal = std::move(message);
  }
  return result;
}

// Printable for an error message: at most 64 bytes, control bytes escaped.
std::string Quote(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) {
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

int HostSetStatus(faasnode_response* r, int status) {
  if (status < 200 || status > 599) {
    return Refuse(r, ErrorCode::kInvalidArgument,
                  fmt::format("set status {}, outside 200..599", status), FAASNODE_ERR_INVALID);
  }
  r->out->status = status;
  return FAASNODE_OK;
}

int HostAddHeader(faasnode_response* r, faasnode_str name_s, faasnode_str value_s) {
  std::string_view name = View(name_s), value = View(value_s);
  // junction/http's table-driven checks: a std::string_view::find per byte (the set of
  // token punctuation, "\r\n\0") cost a memchr call each, on every header of every call.
  if (!junction::http::IsToken(name)) {
    return Refuse(
        r, ErrorCode::kInvalidArgument,
        fmt::format("added a header named '{}', which is not an RFC 9110 token", Quote(name)),
        FAASNODE_ERR_INVALID);
  }
  if (!junction::http::IsValidFieldValue(value)) {
    return Refuse(
        r, ErrorCode::kInvalidArgument,
        fmt::format("added header '{}' with CR, LF or NUL in its value '{}'", name, Quote(value)),
        FAASNODE_ERR_INVALID);
  }
  for (std::string_view framing : {"content-length", "transfer-encoding", "connection"}) {
    if (junction::http::EqualsIgnoreCase(name, framing)) {
      return Refuse(r, ErrorCode::kInvalidArgument,
                    fmt::format("added header '{}', which the node writes itself", name),
                    FAASNODE_ERR_INVALID);
    }
  }
  junction::http::AppendHeaderLine(r->out->header_lines, name, value);
  return FAASNODE_OK;
}

int HostWriteBody(faasnode_response* r, const void* data, std::size_t size) {
  std::string& body = r->out->body;
  if (size > r->max_body - std::min(r->max_body, body.size())) {
    return Refuse(r, ErrorCode::kResourceExhausted,
                  fmt::format("wrote more than {} bytes of response body (the instance's "
                              "max_response_body_bytes)",
                              r->max_body),
                  FAASNODE_ERR_TOO_LARGE);
  }
  if (size > 0) body.append(static_cast<const char*>(data), size);
  return FAASNODE_OK;
}

int HostReportEnergy(faasnode_response* r, int zone, double joules, int source) {
  if (zone != FAASNODE_ENERGY_ZONE_GPU) {
    return Refuse(r, ErrorCode::kInvalidArgument,
                  fmt::format("reported energy in zone {}; the only zone a function may report is "
                              "FAASNODE_ENERGY_ZONE_GPU ({})",
                              zone, static_cast<int>(FAASNODE_ENERGY_ZONE_GPU)),
                  FAASNODE_ERR_INVALID);
  }
  if (source != FAASNODE_ENERGY_SOURCE_NVML) {
    return Refuse(r, ErrorCode::kInvalidArgument,
                  fmt::format("reported energy from source {}; the only source is "
                              "FAASNODE_ENERGY_SOURCE_NVML ({})",
                              source, static_cast<int>(FAASNODE_ENERGY_SOURCE_NVML)),
                  FAASNODE_ERR_INVALID);
  }
  if (!std::isfinite(joules) || joules < 0) {
    return Refuse(r, ErrorCode::kInvalidArgument,
                  fmt::format("reported {} J of energy; joules must be finite and >= 0", joules),
                  FAASNODE_ERR_INVALID);
  }
  r->out->energy.push_back({MeasuredZone::kGpu, MeasuredSource::kNvml, joules});
  return FAASNODE_OK;
}

void DefaultLog(const LogRecord& r) {
  static constexpr std::string_view kNames[] = {"debug", "info", "warn", "error"};
  std::fputs(fmt::format("[fn {} #{}] {}: {}\n", r.function, r.call_id,
                         kNames[static_cast<int>(r.level)], r.message)
                 .c_str(),
             stderr);
}

void HostLog(const faasnode_logger* logger, int level, faasnode_str message) {
  LogRecord record;
  record.function = logger->function;
  record.call_id = logger->call_id;
  record.level =
      static_cast<LogLevel>(std::clamp<int>(level, FAASNODE_LOG_DEBUG, FAASNODE_LOG_ERROR));
  record.message = View(message);
  if (*logger->sink) {
    (*logger->sink)(record);
  } else {
    DefaultLog(record);
  }
}

void HostSleepNs(std::uint64_t ns) {
  // Bounded so that now + d cannot overflow the clock; nobody sleeps a year in a function.
  constexpr std::uint64_t kMaxNs = std::uint64_t{365} * 24 * 3600 * 1'000'000'000;
  auto d = std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(ns, kMaxNs)));
  if (junction::sched::InRuntime()) {
    junction::sched::SleepFor(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

void HostYield() {
  if (junction::sched::InRuntime()) {
    junction::sched::Yield();
  } else {
    std::this_thread::yield();
  }
}

std::uint64_t HostNowNs() {
  return static_cast<std::uint64_t>(junction::sched::MonoNs());
}

std::uint64_t DeadlineNs(junction::sched::Deadline d) {
  if (d == junction::sched::Deadline::max()) return FAASNODE_NO_DEADLINE;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d.time_since_epoch()).count();
  return ns <= 0 ? 0 : static_cast<std::uint64_t>(ns);
}

}  // namespace

struct Instance::State {
  std::shared_ptr<const NativeFunction> fn;
  std::string name;
  InstanceOptions options;
  FunctionEnv env;  // owns the bytes var_kv and secret_kv point to
  std::vector<faasnode_kv> var_kv;
  std::vector<faasnode_kv> secret_kv;
  faasnode_env c_env{};
  faasnode_logger logger{};  // the instance stream: init and fini
  faasnode_host host{};
  void* fn_state = nullptr;
  bool initialized = false;
};

Status<Instance> Instance::Create(std::shared_ptr<const NativeFunction> fn, FunctionEnv env,
                                  InstanceOptions options) {
  if (fn == nullptr) return MakeError(ErrorCode::kInvalidArgument, "Instance::Create: no function");
  auto s = std::make_unique<State>();
  s->name = std::string(fn->name());
  s->fn = std::move(fn);
  s->options = std::move(options);
  s->env = std::move(env);
  for (const auto& [k, v] : s->env.vars) s->var_kv.push_back({Str(k), Str(v)});
  for (const auto& [k, v] : s->env.secrets) s->secret_kv.push_back({Str(k), Str(v)});
  s->c_env = {s->var_kv.data(), s->var_kv.size(), s->secret_kv.data(), s->secret_kv.size()};
  s->logger = {&s->options.log, s->name, 0};
  s->host.abi_version = FAASNODE_ABI_VERSION;
  s->host.struct_size = sizeof(faasnode_host);
  s->host.logger = &s->logger;
  s->host.set_status = &HostSetStatus;
  s->host.add_header = &HostAddHeader;
  s->host.write_body = &HostWriteBody;
  s->host.log = &HostLog;
  s->host.sleep_ns = &HostSleepNs;
  s->host.yield = &HostYield;
  s->host.now_ns = &HostNowNs;
  s->host.report_energy = &HostReportEnergy;
  s->host.http_request = &HostHttpRequest;

  int rc = s->fn->descriptor().init(&s->host, &s->c_env, &s->fn_state);
  if (rc != FAASNODE_OK) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("function '{}' ({}) failed to start: init returned {}; its log "
                                 "says why",
                                 s->name, s->fn->path(), rc));
  }
  s->initialized = true;
  return Instance(std::move(s));
}

std::vector<std::pair<std::string, std::string>> Response::AllHeaders() const {
  std::vector<std::pair<std::string, std::string>> all(headers);
  junction::http::ForEachHeaderLine(header_lines, [&](std::string_view name, std::string_view value) {
    all.emplace_back(name, value);
  });
  return all;
}

Instance::Instance(std::unique_ptr<State> state) : state_(std::move(state)) {}
Instance::Instance(Instance&& other) noexcept = default;

Instance& Instance::operator=(Instance&& other) noexcept {
  if (this != &other) {
    Instance dying(std::move(*this));  // fini of the old state, after the move
    state_ = std::move(other.state_);
  }
  return *this;
}

Instance::~Instance() {
  if (state_ != nullptr && state_->initialized) {
    state_->fn->descriptor().fini(state_->fn_state);
  }
}

std::string_view Instance::name() const {
  return state_->name;
}
const NativeFunction& Instance::function() const {
  return *state_->fn;
}

Status<void> Instance::Invoke(const Request& request, Response& response) const {
  const State& s = *state_;
  response.Clear();

  // The header list in the ABI's layout: on the stack for ordinary requests.
  constexpr std::size_t kInlineHeaders = 32;
  faasnode_kv inline_kv[kInlineHeaders];
  std::vector<faasnode_kv> heap_kv;
  faasnode_kv* kv = inline_kv;
  if (request.headers.size() > kInlineHeaders) {
    heap_kv.resize(request.headers.size());
    kv = heap_kv.data();
  }
  for (std::size_t i = 0; i < request.headers.size(); ++i) {
    kv[i] = {Str(request.headers[i].name), Str(request.headers[i].value)};
  }

  faasnode_logger logger{&s.options.log, s.name, request.call_id};
  faasnode_request c{};
  c.host = &s.host;
  c.env = &s.c_env;
  c.method = Str(request.method);
  c.path = Str(request.path);
  c.query = Str(request.query);
  c.headers = kv;
  c.num_headers = request.headers.size();
  c.body = Str(request.body);
  c.deadline_ns = DeadlineNs(request.deadline);
  c.logger = &logger;
  c.call_id = request.call_id;

  faasnode_response writer{&response, s.options.max_response_body_bytes, ErrorCode::kInternal, {},
                           s.options.http, request.deadline, {}};
  int rc = s.fn->descriptor().handle(s.fn_state, &c, &writer);
  if (!writer.refusal.empty()) {
    response.Clear();
    return MakeError(writer.refusal_code, fmt::format("function '{}' {}", s.name, writer.refusal));
  }
  if (rc != FAASNODE_OK) {
    response.Clear();
    return MakeError(
        ErrorCode::kInternal,
        fmt::format("function '{}' failed: handle returned {}; its log says why", s.name, rc));
  }
  return {};
}

}  // namespace faasnode::store
