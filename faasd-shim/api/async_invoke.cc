// async_invoke.cc — the /async-function endpoint.
#include "faasd-shim/api/async_invoke.h"

#include <fmt/format.h>
#include <time.h>

#include <random>

#include "faasd-shim/api/system_common.h"

namespace faasnode::api {
namespace {

std::int64_t UnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string NewCallUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t hi = rng(), lo = rng();
  hi = (hi & ~std::uint64_t{0xf000}) | 0x4000;                    // version 4
  lo = (lo & ~(std::uint64_t{0xc} << 60)) | (std::uint64_t{0x8} << 60);  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

RouteHandler MakeAsyncInvokeHandler(async::AsyncQueue* queue, std::string served_by) {
  return [queue, served_by = std::move(served_by)](const Request& req, std::string_view rest, Reply& reply) {
    const std::size_t slash = rest.find('/');
    const std::string_view name = rest.substr(0, slash);
    if (!ValidName(name)) {
      PlainError(reply, 404, "404 page not found");
      return;
    }
    if (req.method != junction::http::Method::kPost) {
      MethodNotAllowed(reply, "POST");
      return;
    }
    async::QueuedCall call;
    if (const auto cb = req.headers.Find("X-Callback-Url"); cb && !cb->empty()) {
      if (auto url = async::ParseCallbackUrl(*cb); !url) {
        PlainError(reply, 400, url.error().message());
        return;
      }
      call.callback_url = std::string(*cb);
    }
    const auto given = req.headers.Find("X-Call-Id");
    call.call_id = given && !given->empty() ? std::string(*given) : NewCallUuid();
    call.function = std::string(name);
    call.path = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash));
    call.query = std::string(req.query);
    for (const auto& h : req.headers) call.headers.emplace_back(std::string(h.name), std::string(h.value));
    call.body = std::string(req.body);
    const std::int64_t start = UnixNs();
    call.enqueued_ns = start;
    std::string call_id = call.call_id;
    if (auto id = queue->Enqueue(std::move(call)); !id) {
      PlainError(reply, 500, fmt::format("Error queuing request: {}", id.error().message()));
      return;
    }
    EmptyReply(reply, 202);
    reply.headers.emplace_back("X-Call-Id", std::move(call_id));
    reply.headers.emplace_back("X-Start-Time", std::to_string(start));
    reply.headers.emplace_back("X-Served-By", served_by);
  };
}

}  // namespace faasnode::api
