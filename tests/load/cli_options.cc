// cli_options.cc — URL, durations, headers, the mix file and dpdk options into LoadOptions.
#include "tests/load/cli_options.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace faasload {

namespace {

using junction::Error;
using junction::ErrorCode;
using junction::Status;
using junction::http::Method;

std::unexpected<Error> Bad(std::string message) {
  return std::unexpected(Error(ErrorCode::kInvalidArgument, std::move(message)));
}

Status<Method> ParseMethod(std::string_view text) {
  const Method m = junction::http::MethodFromName(text);
  if (m != Method::kOther && m != Method::kConnect) return m;
  return Bad(fmt::format("unknown method '{}': use GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS or TRACE",
                         text));
}

Status<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Bad(fmt::format("cannot read {} '{}': check the path", what, path));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> SplitSpaces(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

}  // namespace

Status<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  std::string_view num = text;
  double scale = 1e9;
  auto ends = [&](std::string_view suffix) {
    if (num.size() > suffix.size() && num.substr(num.size() - suffix.size()) == suffix) {
      num.remove_suffix(suffix.size());
      return true;
    }
    return false;
  };
  if (ends("ms")) {
    scale = 1e6;
  } else if (ends("us")) {
    scale = 1e3;
  } else if (ends("ns")) {
    scale = 1;
  } else if (ends("s")) {
    scale = 1e9;
  } else if (ends("m")) {
    scale = 60e9;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size() || !std::isfinite(v) || v < 0 || v * scale > 1e18) {
    return Bad(fmt::format("bad duration '{}': write e.g. 500ms, 2s, 1.5s, 250us or 1m", text));
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(v * scale)));
}

Status<std::vector<RequestKind>> ParseMixFile(const std::string& path) {
  auto text = ReadWholeFile(path, "--mix file");
  if (!text) return std::unexpected(text.error());
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<RequestKind> kinds;
  std::istringstream in(*text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto words = SplitSpaces(line);
    if (words.empty()) continue;
    auto where = [&] { return fmt::format("--mix {} line {}", path, line_no); };
    if (words.size() < 3 || words.size() > 4) {
      return Bad(fmt::format("{}: expected 'WEIGHT METHOD PATH [BODY-FILE]', got {} fields", where(),
                             words.size()));
    }
    RequestKind k;
    unsigned long w = 0;
    auto [p, ec] = std::from_chars(words[0].data(), words[0].data() + words[0].size(), w);
    if (ec != std::errc() || p != words[0].data() + words[0].size() || w == 0 || w > 1'000'000) {
      return Bad(fmt::format("{}: weight '{}' must be an integer 1..1000000", where(), words[0]));
    }
    k.weight = static_cast<std::uint32_t>(w);
    auto m = ParseMethod(words[1]);
    if (!m) return Bad(fmt::format("{}: {}", where(), m.error().message()));
    k.method = *m;
    if (words[2].empty() || words[2][0] != '/') {
      return Bad(fmt::format("{}: path '{}' must start with '/'", where(), words[2]));
    }
    k.target = words[2];
    if (words.size() == 4) {
      std::filesystem::path body = words[3];
      if (body.is_relative()) body = dir / body;
      auto b = ReadWholeFile(body.string(), "body file");
      if (!b) return Bad(fmt::format("{}: {}", where(), b.error().message()));
      k.body = std::move(*b);
    }
    kinds.push_back(std::move(k));
  }
  if (kinds.empty()) return Bad(fmt::format("--mix {} has no request lines: add 'WEIGHT METHOD PATH'", path));
  return kinds;
}

Status<LoadOptions> BuildLoadOptions(const CliArgs& a) {
  LoadOptions o;
  // URL: http://IP[:PORT]/PATH
  constexpr std::string_view kScheme = "http://";
  std::string_view url = a.url;
  if (!url.starts_with(kScheme)) {
    return Bad(fmt::format("--url '{}' must start with http:// (https is not supported)", a.url));
  }
  url.remove_prefix(kScheme.size());
  const std::size_t slash = url.find('/');
  std::string_view hostport = url.substr(0, slash);
  std::string path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  std::string hp(hostport);
  if (hp.find(':') == std::string::npos) hp += ":80";
  auto ep = junction::net::Endpoint::Parse(hp);
  if (!ep || ep->port == 0) {
    return Bad(fmt::format("--url host '{}' must be an IPv4 literal with an optional port, e.g. "
                           "http://127.0.0.1:8080/function/echo",
                           hostport));
  }
  o.target = *ep;
  o.host_header = std::string(hostport);

  if (a.rate > 0 && a.closed) return Bad("--rate and --closed exclude each other: pick one");
  if (a.rate <= 0 && !a.closed) return Bad("give --rate R (open loop, R > 0 req/s) or --closed");
  o.rate_rps = a.closed ? 0 : a.rate;

  if (!a.mix_file.empty()) {
    if (!a.body.empty() || !a.body_file.empty() || !a.method.empty()) {
      return Bad("--mix replaces --method, --body and --body-file: give those in the mix file");
    }
    auto kinds = ParseMixFile(a.mix_file);
    if (!kinds) return std::unexpected(kinds.error());
    o.kinds = std::move(*kinds);
  } else {
    RequestKind k;
    k.target = path;
    if (!a.body_file.empty()) {
      auto b = ReadWholeFile(a.body_file, "--body-file");
      if (!b) return std::unexpected(b.error());
      k.body = std::move(*b);
    } else {
      k.body = a.body;
    }
    const bool has_body = !a.body.empty() || !a.body_file.empty();
    auto m = ParseMethod(a.method.empty() ? (has_body ? "POST" : "GET") : a.method);
    if (!m) return Bad(fmt::format("--method: {}", m.error().message()));
    k.method = *m;
    o.kinds.push_back(std::move(k));
  }
  for (const auto& h : a.headers) {
    const std::size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Bad(fmt::format("--header '{}' must look like \"Name: value\"", h));
    }
    std::string name = h.substr(0, colon);
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(value.begin());
    if (name == "Host" || name == "host") {
      o.host_header = value;
      continue;
    }
    o.headers.emplace_back(std::move(name), std::move(value));
  }
  if (a.connections < 1) return Bad("--connections must be >= 1");
  o.connections = a.connections;
  auto d = ParseDuration(a.duration);
  if (!d) return Bad(fmt::format("--duration: {}", d.error().message()));
  if (d->count() == 0) return Bad("--duration must be > 0, e.g. 10s");
  o.duration = *d;
  auto w = ParseDuration(a.warmup);
  if (!w) return Bad(fmt::format("--warmup: {}", w.error().message()));
  o.warmup = *w;
  auto t = ParseDuration(a.timeout);
  if (!t) return Bad(fmt::format("--timeout: {}", t.error().message()));
  if (t->count() == 0) return Bad("--timeout must be > 0, e.g. 5s");
  o.timeout = *t;
  o.max_requests = a.requests;
  if (a.cores < 1) return Bad("--cores must be >= 1");
  o.cores = a.cores;
  o.progress = !a.quiet;

  if (a.backend != "kernel" && a.backend != "dpdk") {
    return Bad(fmt::format("--backend '{}': use kernel or dpdk", a.backend));
  }
  o.backend = a.backend;
  if (a.backend == "dpdk") {
    if (a.dpdk_ip.empty()) return Bad("--backend dpdk needs --dpdk-ip ADDR/PREFIX, e.g. 10.79.0.3/24");
    auto& d2 = o.stack_options.dpdk;
    const std::size_t s = a.dpdk_ip.find('/');
    auto ip = junction::net::Ipv4Addr::Parse(a.dpdk_ip.substr(0, s));
    int prefix = 24;
    if (s != std::string::npos) {
      const std::string p = a.dpdk_ip.substr(s + 1);
      auto [q, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
      if (ec != std::errc() || q != p.data() + p.size() || prefix < 1 || prefix > 32) ip = std::unexpected(ip ? Error(ErrorCode::kInvalidArgument, "prefix") : ip.error());
    }
    if (!ip) return Bad(fmt::format("--dpdk-ip '{}' must be an IPv4 address with a prefix, e.g. 10.79.0.3/24", a.dpdk_ip));
    d2.ip = *ip;
    d2.prefix_len = prefix;
    if (!a.dpdk_gw.empty()) {
      auto gw = junction::net::Ipv4Addr::Parse(a.dpdk_gw);
      if (!gw) return Bad(fmt::format("--dpdk-gw '{}' must be an IPv4 address", a.dpdk_gw));
      d2.gateway = *gw;
    }
    if (!a.dpdk_eal.empty()) {
      d2.eal_args = {"--no-pci", "--log-level=*:warning"};
      for (auto& arg : SplitSpaces(a.dpdk_eal)) d2.eal_args.push_back(std::move(arg));
    }
    d2.port = a.dpdk_port;
    if (a.dpdk_idle_poll_us != 0) d2.idle_poll_max_us = a.dpdk_idle_poll_us;
  } else if (!a.dpdk_eal.empty() || !a.dpdk_ip.empty() || !a.dpdk_gw.empty() || a.dpdk_idle_poll_us != 0) {
    return Bad("--dpdk-eal/--dpdk-ip/--dpdk-gw/--dpdk-idle-poll-us need --backend dpdk");
  }
  if (auto v = ValidateLoadOptions(o); !v) return std::unexpected(v.error());
  return o;
}

}  // namespace faasload
