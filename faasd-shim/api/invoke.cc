// invoke.cc — the function invocation endpoint.
#include "faasd-shim/api/invoke.h"

#include "junction/base/decimal.h"
#include "junction/base/general6.h"
#include "junction/base/uuid.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/random.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <new>
#include <span>
#include <vector>

#include "faasd-shim/billing/call_cycles.h"
#include "junction/sched/cycle_accounts.h"
#include "junction/sched/sched.h"
#include "junction/sched/tsc.h"

namespace faasnode::api {
namespace {

// A random UUID (version 4) for a call that came without X-Call-Id, as the gateway makes one;
// a per-kthread xorshift generator seeded once from getrandom(2): no syscall per call.
// Writes the 36 characters into `out`.
void NewCallUuid(char* out) {
  thread_local std::uint64_t state = [] {
    std::uint64_t seed = 0;
    while (getrandom(&seed, sizeof(seed), 0) != static_cast<ssize_t>(sizeof(seed))) {
    }
    return seed | 1;
  }();
  auto next = [] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::uint64_t a = next(), b = next();
  // a's 64 bits with the version nibble (4) replacing bits 12..15, then the variant bits (10)
  // and 62 bits of b, big-endian, as 8-4-4-4-12 text (junction/base/uuid.h: fmt cost ~0.2 us
  // per call here).
  const std::uint64_t hi = (a & ~0xf000ULL) | 0x4000;
  const std::uint64_t lo = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  std::uint8_t bytes[16];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<std::uint8_t>(hi >> (56 - 8 * i));
    bytes[8 + i] = static_cast<std::uint8_t>(lo >> (56 - 8 * i));
  }
  junction::FormatUuid(bytes, out);
}

// `seconds` as to_chars(fixed, 6) writes it ("0.000012"), from integer microseconds: the
// floating-point to_chars cost ~400 instructions per call on the invoke path.
std::string_view FixedMicros(char (&buf)[32], double seconds) {
  const std::uint64_t us = seconds > 0 ? static_cast<std::uint64_t>(seconds * 1e6 + 0.5) : 0;
  char* p = std::to_chars(buf, buf + 20, us / 1'000'000).ptr;
  *p++ = '.';
  std::uint64_t frac = us % 1'000'000;
  for (int i = 5; i >= 0; --i, frac /= 10) p[i] = static_cast<char>('0' + frac % 10);
  return std::string_view(buf, static_cast<std::size_t>(p + 6 - buf));
}

// Call ids: per kthread counters tagged with the core, so no core shares a counter; the
// runtime's account tables keep one core's consecutive ids in neighbouring slots.
std::uint64_t NextCallId() {
  thread_local std::uint64_t seq = 0;
  const int core = junction::sched::CurrentCore();
  return junction::sched::SequentialAccount(++seq, core < 0 ? 255u : static_cast<unsigned>(core));
}

// What the function measured itself (SDK report_energy), as the ledger's zone vector.
energy::ZoneJoules MeasuredJoules(std::span<const store::MeasuredEnergy> reported) {
  energy::ZoneJoules out;
  for (const store::MeasuredEnergy& e : reported) {
    // The store accepts only zone gpu from NVML (instance.cc, HostReportEnergy).
    out.Add(energy::Zone::kGpu, energy::Joules{e.joules});
    out.sources.Add(energy::Source::kNvml);
  }
  return out;
}

}  // namespace

RouteHandler MakeInvokeHandler(const instances::InstanceManager* manager, billing::EnergyBiller* biller) {
  return [manager, biller](const Request& req, std::string_view rest, Reply& reply) {
    // rest = NAME[.NS][/path]
    const std::size_t slash = rest.find('/');
    std::string_view name = rest.substr(0, slash);
    const std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    std::string_view ns = kDefaultNamespace;
    if (const std::size_t dot = name.rfind('.'); dot != std::string_view::npos) {  // NAME.NS: the last dot
      ns = name.substr(dot + 1);
      name = name.substr(0, dot);
    }
    std::shared_ptr<instances::FunctionPool> pool = name.empty() ? nullptr : manager->Find(name, ns);
    if (pool == nullptr) {
      // The gateway's text for an unknown function (openfaas-api.md, 2.4), plain text.
      reply.status = 404;
      reply.headers.clear();
      reply.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
      reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
      reply.body = fmt::format("error finding function {}.{}: server returned non-200 status code (404) for "
                               "function, {}, body: \n",
                               name, ns, name);
      return;
    }
    const std::uint64_t call_id = NextCallId();
    // The call id and start time as text on the stack: a 36-byte UUID and 19 digits are past
    // std::string's inline capacity, so two heap allocations per call otherwise.
    const auto given_call_id = req.headers.Find("X-Call-Id");
    // A client's own id is kept (the parser has held it to a field value's rules already; the
    // check is for callers that build requests themselves, like the async queue).
    char uuid[36];
    std::string_view call_id_text;
    if (given_call_id && junction::http::IsValidFieldValue(*given_call_id)) {
      call_id_text = *given_call_id;
    } else {
      NewCallUuid(uuid);
      call_id_text = std::string_view(uuid, sizeof(uuid));
    }
    // One TSC reading gives the start's Unix time, the duration's origin, the call account's
    // start and the estimate's; End()'s gives their ends: two reads per call (~11 ns each).
    const std::uint64_t t0 = junction::sched::Rdtsc();  // invariant TSC: valid across cores
    const std::int64_t start_unix = junction::sched::RealtimeNsAt(t0);  // TSC-extrapolated
    char start_buf[20];
    const std::string_view start_text =
        junction::Decimal(start_buf, static_cast<std::uint64_t>(std::max<std::int64_t>(start_unix, 0)));
    // The function sees the call id and start time among its headers, as behind the gateway.
    // Room for a usual request's headers on the stack, left unconstructed until used (zeroing
    // all 32 slots cost ~130 instructions per call); more spill to the heap.
    constexpr std::size_t kFixed = 32;
    union Fixed {
      Fixed() {}
      store::Header h[kFixed];
    } fixed;
    std::vector<store::Header> spill;
    std::span<const store::Header> headers;
    if (req.headers.size() + 2 <= kFixed) {
      std::size_t i = 0;
      auto put = [&](std::string_view name, std::string_view value) {
        new (&fixed.h[i++]) store::Header{name, value};
      };
      for (const auto& h : req.headers) put(h.name, h.value);
      if (!given_call_id) put("X-Call-Id", call_id_text);
      put("X-Start-Time", start_text);
      headers = std::span<const store::Header>(fixed.h, i);
    } else {
      for (const auto& h : req.headers) spill.push_back({h.name, h.value});
      if (!given_call_id) spill.push_back({"X-Call-Id", call_id_text});
      spill.push_back({"X-Start-Time", start_text});
      headers = spill;
    }
    store::Response fn_resp;
    // The function writes into the connection's reply buffers (Reply::Reset left them empty
    // with their capacity), so its headers cost no allocation per call; they come back below.
    fn_resp.headers.swap(reply.headers);
    fn_resp.header_lines.swap(reply.header_lines);
    // The call's own cycle account exists for the biller only: without one nothing closes the
    // per-core account tables often, and an account per call would grow them without bound
    // (and cost a hash insert per call). Unbilled, the call's cycles stay in the connection's
    // account, which the runtime's busy totals count all the same.
    // From t0 (the few ns of header setup since then are the call's).
    const junction::sched::AccountId before = biller != nullptr ? junction::sched::CurrentAccount() : 0;
    if (biller != nullptr) junction::sched::SetAccountAt(call_id, t0);
    const billing::CallCycles call_cycles(t0);
    instances::InvokeOutcome outcome = pool->Invoke(
        {.method = req.method_name, .path = path, .query = req.query, .headers = headers, .body = req.body,
         .call_id = call_id},
        fn_resp);
    const billing::CallCycles::Result ran = call_cycles.End();
    const std::int64_t end_unix = junction::sched::RealtimeNsAt(ran.end_tsc);  // on End()'s kthread
    if (biller != nullptr) junction::sched::SetAccountAt(before, ran.end_tsc);
    const double seconds = junction::sched::CyclesToNs(ran.end_tsc - t0) * 1e-9;
    switch (outcome.kind) {
      case instances::InvokeOutcome::Kind::kServed:
        reply.status = fn_resp.status;
        reply.headers.swap(fn_resp.headers);
        // The function's lines first, then the node's fields below (as with `headers`).
        reply.header_lines.swap(fn_resp.header_lines);
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
                        .function = pool->stable_name(),
                        .ns = pool->ns(),
                        .start_ns = start_unix,
                        .end_ns = end_unix,
                        .status = reply.status,
                        .bytes_in = req.body.size(),
                        .bytes_out = reply.body.size(),
                        .measured = MeasuredJoules(fn_resp.energy)});
    }
    // The node's own fields, formatted straight into the head's header lines: their names are
    // constants and their values are ours (digits, a UUID, fixed words) or the request's own
    // X-Call-Id, which the parser already held to a field value's rules; so no per-field copy,
    // allocation or check (junction/http Reply::header_lines).
    std::string& lines = reply.header_lines;
    lines.reserve(lines.size() + 384);
    junction::http::AppendHeaderLine(lines, "X-Call-Id", call_id_text);
    junction::http::AppendHeaderLine(lines, "X-Start-Time", start_text);
    lines.append("X-Served-By: faasnode/" FAASNODE_VERSION "\r\n");  // a constant line
    char micros[32];
    junction::http::AppendHeaderLine(lines, "X-Duration-Seconds", FixedMicros(micros, seconds));
    char num[64];
    if (biller != nullptr && biller->response_headers()) {
      // The estimate at completion; the ledger row is the final bill (see energy_biller.h).
      const billing::CallEstimate e = biller->EstimateCall(ran.cycles);
      char g6[32];  // six significant digits, as to_chars(general, 6): junction/base/general6.h
      junction::http::AppendHeaderLine(lines, "X-Energy-Joules", junction::General6(g6, e.joules));
      junction::http::AppendHeaderLine(lines, "X-Carbon-Grams", junction::General6(g6, e.grams));
      junction::http::AppendHeaderLine(lines, "X-Energy-Source", e.sources.Name());
      junction::http::AppendHeaderLine(lines, "X-Energy-Estimate", ran.on_cpu ? "on-cpu" : "upper-bound");
      // How the grams' carbon intensity was obtained, in the ledger's intensity_kind words:
      // constant (configured g/kWh) | measured (a trace row) | interpolated | held (a trace gap,
      // filled per [energy] carbon_gaps).
      junction::http::AppendHeaderLine(lines, "X-Carbon-Intensity-Kind",
                                       energy::carbon::IntensityKindName(e.intensity_kind));
    }
    if (outcome.cold_start) {
      const auto r = std::to_chars(num, num + sizeof(num),
                                   std::chrono::duration<double>(outcome.cold_start_time).count(),
                                   std::chars_format::fixed, 6);
      junction::http::AppendHeaderLine(lines, "X-Cold-Start-Seconds", std::string_view(num, r.ptr));
    }
  };
}

}  // namespace faasnode::api
