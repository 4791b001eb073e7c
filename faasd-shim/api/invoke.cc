// invoke.cc — the function invocation endpoint.
#include "faasd-shim/api/invoke.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <time.h>

#include <array>
#include <vector>

#include "junction/sched/sched.h"

namespace faasnode::api {
namespace {

// Call ids: per kthread counters tagged with the core, so no core shares a counter.
std::uint64_t NextCallId() {
  thread_local std::uint64_t seq = 0;
  const int core = junction::sched::CurrentCore();
  return (++seq << 8) | static_cast<std::uint64_t>(core < 0 ? 255 : core);
}

std::int64_t UnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

}  // namespace

RouteHandler MakeInvokeHandler(const instances::InstanceManager* manager, billing::EnergyBiller* biller) {
  return [manager, biller](const Request& req, std::string_view rest, Reply& reply) {
    // rest = NAME[.NS][/path]
    const std::size_t slash = rest.find('/');
    std::string_view name = rest.substr(0, slash);
    const std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (const std::size_t dot = name.find('.'); dot != std::string_view::npos) {
      const std::string_view ns = name.substr(dot + 1);
      name = name.substr(0, dot);
      if (ns != kDefaultNamespace) {
        ErrorReply(reply, 404, fmt::format("namespace {} not found: this node serves {}", ns, kDefaultNamespace));
        return;
      }
    }
    instances::FunctionPool* pool = name.empty() ? nullptr : manager->Find(name);
    if (pool == nullptr) {
      ErrorReply(reply, 404, fmt::format("function {} not found; deployed: {}", name,
                                         fmt::join(manager->Names(), ", ")));
      return;
    }
    std::array<store::Header, 128> fixed;
    std::vector<store::Header> spill;
    std::span<const store::Header> headers;
    if (req.headers.size() <= fixed.size()) {
      std::size_t i = 0;
      for (const auto& h : req.headers) fixed[i++] = {h.name, h.value};
      headers = std::span(fixed.data(), i);
    } else {
      for (const auto& h : req.headers) spill.push_back({h.name, h.value});
      headers = spill;
    }
    const std::uint64_t call_id = NextCallId();
    std::string call_id_text;
    if (const auto given = req.headers.Find("X-Call-Id")) {
      call_id_text = std::string(*given);
    } else {
      call_id_text = fmt::format("{:016x}", call_id);
    }
    const std::int64_t start_unix = UnixNs();
    const auto t0 = junction::sched::Clock::now();
    store::Response fn_resp;
    const junction::sched::AccountId before = junction::sched::CurrentAccount();
    junction::sched::SetAccount(call_id);
    instances::InvokeOutcome outcome = pool->Invoke(
        {.method = req.method_name, .path = path, .query = req.query, .headers = headers, .body = req.body,
         .call_id = call_id},
        fn_resp);
    junction::sched::SetAccount(before);
    const double seconds = std::chrono::duration<double>(junction::sched::Clock::now() - t0).count();
    switch (outcome.kind) {
      case instances::InvokeOutcome::Kind::kServed:
        reply.status = fn_resp.status;
        reply.headers = std::move(fn_resp.headers);
        reply.body = std::move(fn_resp.body);
        break;
      case instances::InvokeOutcome::Kind::kOverloaded:
        ErrorReply(reply, 429, outcome.error);
        break;
      case instances::InvokeOutcome::Kind::kColdStartFailed:
      case instances::InvokeOutcome::Kind::kFunctionFailed:
        ErrorReply(reply, 500, outcome.error);
        break;
    }
    if (biller != nullptr) {
      biller->Complete({.account = call_id,
                        .call_id = call_id_text,
                        .function = pool->name(),
                        .ns = kDefaultNamespace,
                        .start_ns = start_unix,
                        .end_ns = UnixNs(),
                        .status = reply.status,
                        .bytes_in = req.body.size(),
                        .bytes_out = reply.body.size()});
    }
    reply.headers.emplace_back("X-Call-Id", std::move(call_id_text));
    reply.headers.emplace_back("X-Start-Time", std::to_string(start_unix));
    reply.headers.emplace_back("X-Duration-Seconds", fmt::format("{:.6f}", seconds));
    if (outcome.cold_start) {
      reply.headers.emplace_back("X-Cold-Start-Seconds",
                                 fmt::format("{:.6f}", std::chrono::duration<double>(outcome.cold_start_time).count()));
    }
  };
}

}  // namespace faasnode::api
