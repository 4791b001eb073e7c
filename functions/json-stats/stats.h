// stats.h — json-stats' core: parse a JSON array of numbers, and its summary statistics.
//
// Pure functions, no I/O, no shared state: safe from any thread. Errors are messages for the
// caller of the function (they end up in a 400 body).
#pragma once

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace faasnode::functions {

// The numbers of a JSON array such as "[1, 2.5, -3e2]", in order. Errors: text that is not
// JSON, a top-level value that is not an array, an element that is not a number (nested
// arrays included), a number out of double's range. Never throws.
std::expected<std::vector<double>, std::string> ParseNumberArray(std::string_view json);

struct Stats {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0;
  double stddev = 0;  // population standard deviation (divides by count)
  double median = 0;  // the middle value; the mean of the two middle values for an even count
};

// Statistics of `values` (reordered in place: the median is found by selection). All fields but
// count are meaningless when `values` is empty. The mean and variance use Welford's update, so
// large magnitudes neither overflow a running sum nor cancel catastrophically.
Stats ComputeStats(std::vector<double>& values);

// The response body: {"count":N,"min":..,"max":..,"mean":..,"stddev":..,"median":..}; every
// field but count is null for an empty array.
std::string StatsJson(const Stats& s);

// The 400 body: {"error":"<message>"}.
std::string ErrorJson(std::string_view message);

}  // namespace faasnode::functions
