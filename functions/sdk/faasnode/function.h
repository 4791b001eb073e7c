// function.h — the C++ face of the function SDK: Request, Response, Env and an export macro.
//
// A function is a class with a Handle method, exported under its name:
//
//   #include "faasnode/function.h"
//   class Hello {
//    public:
//     explicit Hello(const faasnode::sdk::Env& env) {}   // optional: runs once, at init
//     void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) {
//       resp.Header("Content-Type", "text/plain");
//       resp.Write("hello, " + req.Query("name").value_or("world") + "\n");
//     }
//   };
//   FAASNODE_EXPORT_FUNCTION(Hello, "hello")
//
// The class is constructed once per instance (from `const Env&` when it has such a constructor,
// else by default) and destroyed at fini. Handle may be const. An exception that leaves the
// constructor fails init; one that leaves Handle fails the invocation (the node answers 500);
// both are logged with their what(). Handle may run on several uthreads at once for one object
// (see function_abi.h, Threads): keep the object read-only after construction, or guard it.
//
// Lifetimes: every string_view a Request returns points into host memory valid until Handle
// returns; an Env and the views it returns stay valid for the object's whole life, so a
// constructor may keep them. Nothing here allocates except Query() (it decodes).
//
// Blocking: SleepFor, Yield and Fetch park the uthread and let the core serve others; never
// block the kthread any other way (see function_abi.h).
//
// Outbound HTTP (ABI v3): Fetch sends a request through the node's own HTTP/1.1 client and
// returns the whole response; URLs are http://IPV4[:PORT]/path or http://localhost[:PORT]/path
// (no DNS, no TLS):
//
//   faasnode::sdk::HttpResult r = req.Fetch({.method = "POST", .url = "http://10.0.0.5:8080/x",
//                                            .body = req.body()});
//   if (!r.ok()) { resp.Status(502); resp.Write(r.error()); return; }
//   resp.Write(r.body()); This header depends on the C++ standard library
// and function_abi.h only.
#pragma once

#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "faasnode/function_abi.h"

namespace faasnode::sdk {

enum class LogLevel : int {
  kDebug = FAASNODE_LOG_DEBUG,
  kInfo = FAASNODE_LOG_INFO,
  kWarn = FAASNODE_LOG_WARN,
  kError = FAASNODE_LOG_ERROR,
};

// One header field, environment variable or secret.
struct Field {
  std::string_view name;
  std::string_view value;
};

namespace detail {

inline std::string_view View(faasnode_str s) {
  return s.size == 0 ? std::string_view() : std::string_view(s.data, s.size);
}
inline faasnode_str Str(std::string_view s) {
  return faasnode_str{s.data(), s.size()};
}

inline char Lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

inline std::optional<std::string_view> Find(const faasnode_kv* kv, std::size_t n,
                                            std::string_view name, bool ignore_case) {
  for (std::size_t i = 0; i < n; ++i) {
    std::string_view k = View(kv[i].name);
    if (ignore_case ? EqualsIgnoreCase(k, name) : k == name) return View(kv[i].value);
  }
  return std::nullopt;
}

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace detail

// Decodes one application/x-www-form-urlencoded component: '+' is a space, %XX a byte. A '%'
// not followed by two hex digits is kept as it is.
inline std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < s.size() && detail::HexValue(s[i + 1]) >= 0 &&
               detail::HexValue(s[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(detail::HexValue(s[i + 1]) * 16 + detail::HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The value of the first `key` in a raw query string ("a=1&b=x%20y"), decoded; nullopt when
// the key is absent. A key without '=' has the value "".
inline std::optional<std::string> QueryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    std::size_t eq = pair.find('=');
    std::string_view k = pair.substr(0, eq);
    std::string_view v = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (k == key || UrlDecode(k) == key) return UrlDecode(v);
  }
  return std::nullopt;
}

// A base-10 unsigned integer with nothing before or after it; nullopt otherwise (a sign, a
// space, a fraction, overflow of uint64).
inline std::optional<std::uint64_t> ParseUint(std::string_view s) {
  std::uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The function's environment (deployment envVars and secrets) and its instance log stream.
// Valid, with every view it returns, for the life of the function object.
class Env {
 public:
  Env(const faasnode_host* host, const faasnode_env* env) : host_(host), env_(env) {}

  // Exact-case lookups; nullopt when not set.
  std::optional<std::string_view> Var(std::string_view name) const {
    return detail::Find(env_->vars, env_->num_vars, name, /*ignore_case=*/false);
  }
  std::optional<std::string_view> Secret(std::string_view name) const {
    return detail::Find(env_->secrets, env_->num_secrets, name, /*ignore_case=*/false);
  }
  std::size_t num_vars() const { return env_->num_vars; }
  Field var(std::size_t i) const {
    return {detail::View(env_->vars[i].name), detail::View(env_->vars[i].value)};
  }

  // A line in the instance's log stream (for constructors and destructors).
  void Log(LogLevel level, std::string_view message) const {
    host_->log(host_->logger, static_cast<int>(level), detail::Str(message));
  }

  const faasnode_host* host() const { return host_; }
  const faasnode_env* raw() const { return env_; }

 private:
  const faasnode_host* host_;
  const faasnode_env* env_;
};

// An outbound HTTP call (Request::Fetch). Views: valid for the Fetch call.
struct HttpCall {
  std::string_view method = "GET";
  std::string_view url;             // http://IPV4[:PORT]/path or http://localhost[:PORT]/path
  std::vector<Field> headers = {};  // Host comes from the URL; framing fields are refused
  std::string_view body = {};
  std::chrono::nanoseconds timeout{0};  // 0: until the invocation's deadline
};

// What Fetch got: views into host memory valid until Handle returns.
class HttpResult {
 public:
  HttpResult(int code, const faasnode_http_result& r) : code_(code), r_(r) {}
  // FAASNODE_OK when a response arrived (any status); else a faasnode_result and error().
  int code() const { return code_; }
  bool ok() const { return code_ == FAASNODE_OK; }
  int status() const { return r_.status; }
  std::string_view body() const { return detail::View(r_.body); }
  std::string_view error() const { return detail::View(r_.error); }
  // The first response header called `name` (any case), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const {
    return detail::Find(r_.headers, r_.num_headers, name, /*ignore_case=*/true);
  }
  std::size_t num_headers() const { return r_.num_headers; }
  Field header(std::size_t i) const {
    return {detail::View(r_.headers[i].name), detail::View(r_.headers[i].value)};
  }

 private:
  int code_;
  faasnode_http_result r_;
};

// One invocation, as views into host memory valid until Handle returns.
class Request {
 public:
  // `out`: the invocation's response, which the host's per-call services (Fetch) are tied to.
  Request(const faasnode_request* r, const Env* env, faasnode_response* out = nullptr)
      : r_(r), env_(env), out_(out) {}

  std::string_view method() const { return detail::View(r_->method); }
  std::string_view path() const { return detail::View(r_->path); }    // after /function/NAME
  std::string_view query() const { return detail::View(r_->query); }  // raw, without '?'
  std::string_view body() const { return detail::View(r_->body); }

  // The first header called `name` (any case), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const {
    return detail::Find(r_->headers, r_->num_headers, name, /*ignore_case=*/true);
  }
  std::size_t num_headers() const { return r_->num_headers; }
  Field header(std::size_t i) const {
    return {detail::View(r_->headers[i].name), detail::View(r_->headers[i].value)};
  }
  // The first query parameter called `key`, URL-decoded, or nullopt. Allocates.
  std::optional<std::string> Query(std::string_view key) const { return QueryValue(query(), key); }

  const Env& env() const { return *env_; }
  std::uint64_t call_id() const { return r_->call_id; }

  // The deadline on the now_ns() clock; FAASNODE_NO_DEADLINE when there is none.
  std::uint64_t deadline_ns() const { return r_->deadline_ns; }
  std::uint64_t NowNs() const { return r_->host->now_ns(); }
  // Time left before the deadline (zero once passed; hours when there is none).
  std::chrono::nanoseconds Remaining() const {
    if (r_->deadline_ns == FAASNODE_NO_DEADLINE) return std::chrono::hours(24 * 365);
    std::uint64_t now = NowNs();
    return std::chrono::nanoseconds(now >= r_->deadline_ns ? 0 : r_->deadline_ns - now);
  }

  // Parks this uthread for `d` or until the deadline, whichever comes first; the core serves
  // others meanwhile. Returns false when the deadline cut the sleep short.
  bool SleepFor(std::chrono::nanoseconds d) const {
    std::chrono::nanoseconds left = Remaining();
    bool cut = d > left;
    std::chrono::nanoseconds s = cut ? left : d;
    if (s.count() > 0) r_->host->sleep_ns(static_cast<std::uint64_t>(s.count()));
    return !cut;
  }
  // Lets other uthreads of this core run (call it now and then in long computations).
  void Yield() const { r_->host->yield(); }

  // An outbound HTTP call through the node's client (ABI v3): parks this uthread until the
  // whole response is there, the call's timeout or the invocation's deadline. A failure is a
  // result (ok() false, error() says why), not a failed invocation. Allocates (the headers).
  HttpResult Fetch(const HttpCall& call) const {
    faasnode_http_result result{};
    const faasnode_host* host = r_->host;
    if (out_ == nullptr || host->abi_version < 3 || host->struct_size < sizeof(faasnode_host)) {
      static constexpr std::string_view kOld = "this host has no http_request (ABI v3)";
      result.error = detail::Str(kOld);
      return HttpResult(FAASNODE_ERR_UNAVAILABLE, result);
    }
    std::vector<faasnode_kv> kv;
    kv.reserve(call.headers.size());
    for (const Field& f : call.headers) kv.push_back({detail::Str(f.name), detail::Str(f.value)});
    faasnode_http_request rq{detail::Str(call.method), detail::Str(call.url), kv.data(),      kv.size(),
                             detail::Str(call.body),   static_cast<std::uint64_t>(call.timeout.count() > 0
                                                                                   ? call.timeout.count()
                                                                                   : 0)};
    const int code = host->http_request(out_, &rq, &result);
    return HttpResult(code, result);
  }

  // A line in this invocation's log stream.
  void Log(LogLevel level, std::string_view message) const {
    r_->host->log(r_->logger, static_cast<int>(level), detail::Str(message));
  }

  const faasnode_request* raw() const { return r_; }

 private:
  const faasnode_request* r_;
  const Env* env_;
  faasnode_response* out_;
};

// Where Handle writes its answer. The host copies everything before a call returns. Each call
// returns false when the host refused it — and a refused call also fails the invocation (500),
// so a function needs to check only where it would do something else.
class Response {
 public:
  Response(const faasnode_host* host, faasnode_response* r) : host_(host), r_(r) {}

  // 200..599; 200 unless set.
  bool Status(int code) { return host_->set_status(r_, code) == FAASNODE_OK; }
  // Appends a header; the name a token, the value without CR/LF/NUL. Content-Length,
  // Transfer-Encoding and Connection are the node's and are refused.
  bool Header(std::string_view name, std::string_view value) {
    return host_->add_header(r_, detail::Str(name), detail::Str(value)) == FAASNODE_OK;
  }
  // Appends to the body. False (FAASNODE_ERR_TOO_LARGE) past the node's response limit.
  bool Write(std::string_view bytes) {
    return host_->write_body(r_, bytes.data(), bytes.size()) == FAASNODE_OK;
  }
  // Bills measured energy to this invocation (function_abi.h, report_energy), e.g.
  // ReportEnergy(FAASNODE_ENERGY_ZONE_GPU, joules, FAASNODE_ENERGY_SOURCE_NVML). False when
  // refused (bad zone, source or value; that also fails the invocation).
  bool ReportEnergy(faasnode_energy_zone zone, double joules, faasnode_energy_source source) {
    return host_->report_energy(r_, static_cast<int>(zone), joules, static_cast<int>(source)) ==
           FAASNODE_OK;
  }

 private:
  const faasnode_host* host_;
  faasnode_response* r_;
};

namespace detail {

template <typename Fn>
struct Holder {
  static Fn Make(const Env& env) {
    if constexpr (std::is_constructible_v<Fn, const Env&>) {
      return Fn(env);
    } else {
      return Fn();
    }
  }
  Holder(const faasnode_host* host, const faasnode_env* raw_env)
      : env(host, raw_env), fn(Make(env)) {}
  Env env;
  Fn fn;
};

inline void LogException(const faasnode_host* host, const faasnode_logger* logger,
                         std::string_view where) {
  std::string msg(where);
  try {
    throw;
  } catch (const std::exception& e) {
    msg += e.what();
  } catch (...) {
    msg += "an exception not derived from std::exception";
  }
  host->log(logger, FAASNODE_LOG_ERROR, Str(msg));
}

template <typename Fn>
int Init(const faasnode_host* host, const faasnode_env* env, void** state) {
  try {
    *state = new Holder<Fn>(host, env);
    return FAASNODE_OK;
  } catch (...) {
    LogException(host, host->logger, "init failed: ");
    return FAASNODE_ERR_FAILED;
  }
}

template <typename Fn>
int Handle(void* state, const faasnode_request* request, faasnode_response* response) {
  auto* h = static_cast<Holder<Fn>*>(state);
  try {
    Request req(request, &h->env, response);
    Response resp(request->host, response);
    h->fn.Handle(req, resp);
    return FAASNODE_OK;
  } catch (...) {
    LogException(request->host, request->logger, "handler threw: ");
    return FAASNODE_ERR_FAILED;
  }
}

// Destructors are noexcept: one that throws terminates the node, as anywhere in C++.
template <typename Fn>
void Fini(void* state) {
  delete static_cast<Holder<Fn>*>(state);
}

template <typename Fn>
constexpr faasnode_function_descriptor MakeDescriptor(const char* name) {
  return faasnode_function_descriptor{FAASNODE_ABI_VERSION,
                                      sizeof(faasnode_function_descriptor),
                                      name,
                                      &Init<Fn>,
                                      &Handle<Fn>,
                                      &Fini<Fn>};
}

}  // namespace detail
}  // namespace faasnode::sdk

// Exports class `Fn` as the function `name` (a string literal: the name the node stores it
// under). Use once per shared object, at namespace scope.
#define FAASNODE_EXPORT_FUNCTION(Fn, name)                                                    \
  extern "C" FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function;            \
  extern "C" FAASNODE_EXPORT constinit const faasnode_function_descriptor faasnode_function = \
      ::faasnode::sdk::detail::MakeDescriptor<Fn>(name);
