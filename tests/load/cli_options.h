// cli_options.h — faasload's command-line values and their translation into LoadOptions.
//
// Parsing of what CLI11 leaves as strings (URL, durations, headers, the mix file, dpdk
// address) lives here so tests can check every bad input's message without the binary.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "junction/base/error.h"
#include "tests/load/load_generator.h"

namespace faasload {

struct CliArgs {
  std::string url;
  std::string method;
  std::string body;
  std::string body_file;
  std::vector<std::string> headers;
  std::string mix_file;
  double rate = 0;
  bool closed = false;
  int connections = 32;
  std::string duration = "10s";
  std::uint64_t requests = 0;
  std::string warmup = "2s";
  std::string timeout = "5s";
  int cores = 1;
  std::string backend = "kernel";
  std::string dpdk_eal;
  std::string dpdk_ip;
  std::string dpdk_gw;
  std::string dpdk_port;
  std::uint32_t dpdk_idle_poll_us = 0;  // 0: the stack's default
  std::string json_out;
  std::string hist_out;
  bool quiet = false;
};

// "500ms", "2s", "1.5s", "250us", "1m", or a bare number of seconds.
junction::Status<std::chrono::nanoseconds> ParseDuration(std::string_view text);
// Errors: kInvalidArgument, one line saying what was wrong and what to do.
junction::Status<LoadOptions> BuildLoadOptions(const CliArgs& args);
// The mix file's lines as request kinds (body files relative to the mix file's folder).
junction::Status<std::vector<RequestKind>> ParseMixFile(const std::string& path);

}  // namespace faasload
