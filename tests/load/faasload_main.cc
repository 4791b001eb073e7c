// faasload_main.cc — the faasload command line: parses options, runs the load, writes reports.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/load/cli_options.h"
#include "tests/load/load_generator.h"
#include "tests/load/report.h"

namespace {

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  faasload::CliArgs args;
  CLI::App app{"faasload: open- and closed-loop HTTP/1.1 load generator (see tests/load/README.md)"};
  app.add_option("--url", args.url, "http://IP[:PORT]/PATH (the host must be an IPv4 literal)")->required();
  app.add_option("--method", args.method, "request method (default POST with a body, else GET)");
  auto* body = app.add_option("--body", args.body, "request body");
  app.add_option("--body-file", args.body_file, "request body from a file")->excludes(body);
  app.add_option("--header", args.headers, "\"Name: value\", repeatable");
  app.add_option("--mix", args.mix_file, "request mix file: WEIGHT METHOD PATH [BODY-FILE] per line");
  auto* rate = app.add_option("--rate", args.rate, "open loop: requests/s in total");
  app.add_flag("--closed", args.closed, "closed loop: next request when the previous answered")->excludes(rate);
  app.add_option("--connections", args.connections, "connections (default 32)");
  app.add_option("--duration", args.duration, "measured duration (default 10s)");
  app.add_option("--requests", args.requests, "stop after N counted requests");
  app.add_option("--warmup", args.warmup, "warm-up, not counted (default 2s)");
  app.add_option("--timeout", args.timeout, "per-request timeout (default 5s)");
  app.add_option("--cores", args.cores, "runtime cores for the generator (default 1)");
  app.add_option("--backend", args.backend, "kernel or dpdk (default kernel)");
  app.add_option("--dpdk-eal", args.dpdk_eal, "dpdk: EAL arguments, space separated");
  app.add_option("--dpdk-ip", args.dpdk_ip, "dpdk: our address with prefix, e.g. 10.79.0.3/24");
  app.add_option("--dpdk-gw", args.dpdk_gw, "dpdk: gateway address");
  app.add_option("--dpdk-idle-poll-us", args.dpdk_idle_poll_us,
                 "dpdk: longest idle poll back-off on ports without rx interrupts (memif), us "
                 "(default: the stack's, 2000)");
  app.add_option("--dpdk-port", args.dpdk_port, "dpdk: ethdev name (default: the first port)");
  app.add_option("--json", args.json_out, "write the JSON report here");
  app.add_option("--hist", args.hist_out, "write the latency percentile distribution here");
  app.add_flag("--quiet", args.quiet, "no progress lines on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "faasload: {} (see faasload --help)\n", e.what());
    return 2;
  }
  auto options = faasload::BuildLoadOptions(args);
  if (!options) {
    fmt::print(stderr, "faasload: {}\n", options.error().message());
    return 2;
  }
  auto result = faasload::RunLoadInRuntime(*options);
  if (!result) {
    fmt::print(stderr, "faasload: {}\n", result.error().message());
    return result.error().code() == junction::ErrorCode::kInvalidArgument ? 2 : 1;
  }
  const faasload::ReportInfo info{.url = args.url, .backend = options->backend, .cores = options->cores};
  fmt::print("{}", faasload::TextSummary(*result, info));
  if (!args.json_out.empty() && !WriteFile(args.json_out, faasload::JsonReport(*result, info))) {
    fmt::print(stderr, "faasload: cannot write --json {}: check the folder exists and is writable\n", args.json_out);
    return 1;
  }
  if (!args.hist_out.empty() && !WriteFile(args.hist_out, faasload::HgrmReport(*result->latency))) {
    fmt::print(stderr, "faasload: cannot write --hist {}: check the folder exists and is writable\n", args.hist_out);
    return 1;
  }
  return 0;
}
