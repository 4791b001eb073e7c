// system_logs.cc — the /system/logs endpoint.
#include "faasd-shim/api/system_logs.h"

#include <fmt/format.h>
#include <time.h>

#include <charconv>

#include "faasd-shim/api/system_common.h"
#include "junction/sched/sched.h"

namespace faasnode::api {
namespace {

// Go's strconv.ParseBool; anything else is false (as the log handler ignores the error).
bool ParseGoBool(std::string_view v) {
  return v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True";
}

// Go's strconv.Atoi: an optional sign and decimal digits.
std::optional<int> ParseGoInt(std::string_view v) {
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  int out = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return out;
}

std::int64_t NowUnixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

}  // namespace

RouteHandler MakeSystemLogsHandler(const logs::LogStore* store, SystemLogsOptions options) {
  return [store, options](const Request& req, std::string_view, Reply& reply) {
    if (req.method != junction::http::Method::kGet) {
      MethodNotAllowed(reply, "GET");
      return;
    }
    auto unparsable = [&](std::string_view why) {
      PlainError(reply, 422, fmt::format("could not parse the log request: {}", why));
    };
    logs::LogQuery q;
    q.name = QueryParam(req.query, "name").value_or("");
    if (auto ns = QueryParam(req.query, "namespace"); ns && !ns->empty()) q.ns = *ns;
    q.instance = QueryParam(req.query, "instance").value_or("");
    if (auto tail = QueryParam(req.query, "tail"); tail && !tail->empty()) {
      auto n = ParseGoInt(*tail);
      if (!n) return unparsable(fmt::format("tail={} is not an integer (give a line count, or -1 for all)", *tail));
      q.tail = *n;
    }
    const bool follow = ParseGoBool(QueryParam(req.query, "follow").value_or(""));
    if (auto since = QueryParam(req.query, "since"); since && !since->empty()) {
      auto t = logs::ParseRfc3339(*since);
      if (!t) {
        return unparsable(fmt::format("since={} is not an RFC 3339 time (like 2024-01-02T15:04:05Z)", *since));
      }
      q.since_ns = *t;
    } else {
      q.since_ns = NowUnixNs() - std::chrono::duration_cast<std::chrono::nanoseconds>(options.default_since).count();
    }
    reply.status = 200;
    reply.headers.emplace_back("Content-Type", "application/x-ndjson");
    reply.stream = [store, options, q = std::move(q), follow](const std::function<bool(std::string_view)>& emit) {
      // `seen` is read before the first Read: a line that lands between the two is then newer
      // than `seen` and is sent at the next poll (read after, it would wait for another line).
      std::uint64_t seen = store->last_seq();
      std::uint64_t cursor = seen;
      std::string line;
      auto last_write = junction::sched::Clock::now();
      auto send = [&](const std::vector<logs::LogLine>& lines) {
        for (const auto& l : lines) {
          cursor = std::max(cursor, l.seq);
          line.clear();
          logs::AppendMessageJson(line, l);
          if (!emit(line)) return false;
          last_write = junction::sched::Clock::now();
        }
        return true;
      };
      if (!send(store->Read(q)) || !follow) return;
      while (true) {
        junction::sched::SleepFor(options.poll);
        // A client that left is only noticed by writing to it: the first write after it closed
        // is still accepted by the kernel (the peer answers it with a reset), the next one
        // fails and ends the stream. So an idle follow writes a keep-alive newline every
        // `keepalive`: json.Decoder (faas-cli logs) skips whitespace between values, and
        // NDJSON readers may skip empty lines. An empty emit writes nothing and only notices
        // a node that drains.
        if (!emit({})) return;
        if (junction::sched::Clock::now() - last_write >= options.keepalive) {
          if (!emit("\n")) return;
          last_write = junction::sched::Clock::now();
        }
        const std::uint64_t now = store->last_seq();
        if (now == seen) continue;
        seen = now;
        if (!send(store->Read(q, cursor))) return;
      }
    };
  };
}

}  // namespace faasnode::api
