// sleep.cc — the sleep function: waits `?ms=N` milliseconds (0..60000) cooperatively, then answers.
//
// The wait parks the invocation's uthread through the host; the core serves other invocations
// meanwhile. 400 when ms is missing, not a base-10 integer, or above 60000; 408 when the
// request's deadline comes first (the function stops waiting at the deadline).
#include <chrono>
#include <string>

#include "faasnode/function.h"

namespace {

constexpr std::uint64_t kMaxMs = 60'000;

class Sleep {
 public:
  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    resp.Header("Content-Type", "application/json");
    std::optional<std::string> arg = req.Query("ms");
    std::optional<std::uint64_t> ms = arg ? faasnode::sdk::ParseUint(*arg) : std::nullopt;
    if (!ms || *ms > kMaxMs) {
      resp.Status(400);
      resp.Write(R"({"error":"ms must be an integer from 0 to 60000, as in ?ms=250"})");
      return;
    }
    if (!req.SleepFor(std::chrono::milliseconds(*ms))) {
      resp.Status(408);
      resp.Write(R"({"error":"the request's deadline came before the sleep ended"})");
      return;
    }
    resp.Write("{\"slept_ms\":" + std::to_string(*ms) + "}");
  }
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(Sleep, "sleep")
