// cpu_burn.cc — the cpu-burn function: `?rounds=N` rounds of the fixed hash loop in burn.h.
//
// Answers {"rounds":N,"hash":"<16 hex digits>"}: the final state, so the work cannot be
// optimised away and a client can check it. Without ?rounds the function burns 1000 rounds.
// 400 when rounds is not a base-10 integer or is above 1,000,000 (a few seconds of one core:
// about 4 us a round on these VMs).
// Every 1000 rounds it yields, so a long burn shares its core with other invocations.
#include <algorithm>
#include <cstdio>
#include <string>

#include "burn.h"
#include "faasnode/function.h"

namespace {

using faasnode::functions::BurnRounds;
using faasnode::functions::kBurnSeed;

constexpr std::uint64_t kMaxRounds = 1'000'000;
constexpr std::uint64_t kDefaultRounds = 1000;
constexpr std::uint64_t kRoundsPerYield = 1000;

class CpuBurn {
 public:
  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    resp.Header("Content-Type", "application/json");
    std::uint64_t rounds = kDefaultRounds;
    if (std::optional<std::string> arg = req.Query("rounds")) {
      std::optional<std::uint64_t> n = faasnode::sdk::ParseUint(*arg);
      if (!n || *n > kMaxRounds) {
        resp.Status(400);
        resp.Write(
            R"({"error":"rounds must be an integer from 0 to 1000000, as in ?rounds=5000"})");
        return;
      }
      rounds = *n;
    }
    std::uint64_t state = kBurnSeed;
    for (std::uint64_t done = 0; done < rounds;) {
      std::uint64_t batch = std::min(kRoundsPerYield, rounds - done);
      state = BurnRounds(batch, state);
      done += batch;
      if (done < rounds) req.Yield();
    }
    char body[96];
    int n = std::snprintf(body, sizeof(body), "{\"rounds\":%llu,\"hash\":\"%016llx\"}",
                          static_cast<unsigned long long>(rounds),
                          static_cast<unsigned long long>(state));
    resp.Write(std::string_view(body, static_cast<std::size_t>(n)));
  }
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(CpuBurn, "cpu-burn")
