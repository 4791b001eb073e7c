// system_carbon.cc — the carbon bill over HTTP.
#include "faasd-shim/api/system_carbon.h"

#include <fmt/format.h>

#include "energy/carbon/intensity.h"
#include "faasd-shim/billing/carbon_query.h"

namespace faasnode::api {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding ('+' is a space); false on a bad %XX escape.
bool Decode(std::string_view in, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      *out += ' ';
    } else if (in[i] == '%') {
      const int hi = i + 1 < in.size() ? Hex(in[i + 1]) : -1;
      const int lo = i + 2 < in.size() ? Hex(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) return false;
      *out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      *out += in[i];
    }
  }
  return true;
}

}  // namespace

RouteHandler MakeSystemCarbonHandler(std::string ledger_path) {
  return [ledger_path = std::move(ledger_path)](const Request& req, std::string_view, Reply& reply) {
    if (req.method_name != "GET" && req.method_name != "HEAD") {
      ErrorReply(reply, 405, fmt::format("method {} not allowed on /system/carbon; use GET", req.method_name));
      reply.headers.emplace_back("Allow", "GET, HEAD");
      return;
    }
    if (ledger_path.empty()) {
      ErrorReply(reply, 404, "this node keeps no energy ledger: set [energy] enabled = true and restart it");
      return;
    }
    billing::CarbonQuery q;
    std::string_view rest = req.query;
    while (!rest.empty()) {
      const std::size_t amp = rest.find('&');
      const std::string_view pair = rest.substr(0, amp);
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
      if (pair.empty()) continue;
      const std::size_t eq = pair.find('=');
      std::string name, value;
      if (!Decode(pair.substr(0, eq), &name) ||
          !Decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), &value)) {
        ErrorReply(reply, 400, fmt::format("query {}: bad %-escape", pair));
        return;
      }
      if (name == "function") {
        q.function = value;
      } else if (name == "group_by") {
        auto g = billing::ParseGroupBy(value);
        if (!g) {
          ErrorReply(reply, 400, g.error().message());
          return;
        }
        q.group_by = *g;
      } else if (name == "since" || name == "until") {
        auto t = energy::carbon::ParseTimestamp(value);
        if (!t) {
          ErrorReply(reply, 400, fmt::format("{}={}: {}", name, value, t.error().message()));
          return;
        }
        (name == "since" ? q.since_ns : q.until_ns) = *t;
      } else {
        ErrorReply(reply, 400,
                   fmt::format("unknown parameter {}; known: function, since, until (ISO 8601 or unix seconds), "
                               "group_by (function or hour)",
                               name));
        return;
      }
    }
    auto report = billing::QueryCarbon(ledger_path, q);
    if (!report) {
      const bool missing = report.error().code() == junction::ErrorCode::kNotFound;
      ErrorReply(reply, missing ? 404 : 500, report.error().message());
      return;
    }
    reply.status = 200;
    reply.headers.emplace_back("Content-Type", "application/json");
    reply.body = billing::CarbonReportJson(*report);
    reply.body += '\n';
  };
}

}  // namespace faasnode::api
