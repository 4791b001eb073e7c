// stats.cc — json-stats' core: a SAX parse that accepts only a flat array of numbers, and Welford.
#include "stats.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace faasnode::functions {
namespace {

using json = nlohmann::json;

// Accepts '[' number* ']' and nothing else; the first violation stops the parse with a message.
class NumberArraySax : public nlohmann::json_sax<json> {
 public:
  std::vector<double> values;
  std::string error;

  bool null() override { return Reject("null"); }
  bool boolean(bool) override { return Reject("a boolean"); }
  bool number_integer(number_integer_t v) override { return Accept(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Accept(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Accept(v); }
  bool string(string_t&) override { return Reject("a string"); }
  bool binary(binary_t&) override { return Reject("binary data"); }
  bool start_object(std::size_t) override { return Reject("an object"); }
  bool key(string_t&) override { return false; }
  bool end_object() override { return false; }
  bool start_array(std::size_t) override {
    if (depth_ > 0) return Reject("an array");
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    std::string_view what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at line 1, ..."
    if (auto close = what.find("] "); what.starts_with("[json.exception") && close != what.npos) {
      what.remove_prefix(close + 2);
    }
    error = "invalid JSON: " + std::string(what);
    return false;
  }

 private:
  bool Accept(double v) {
    if (depth_ == 0) return Reject("a number");
    if (!std::isfinite(v)) {
      error = "element " + std::to_string(values.size()) + " is out of the range of a double";
      return false;
    }
    values.push_back(v);
    return true;
  }
  bool Reject(const char* what) {
    if (depth_ == 0) {
      error = std::string("expected a JSON array of numbers, got ") + what;
    } else {
      error = "element " + std::to_string(values.size()) + " is " + what + ", not a number";
    }
    return false;
  }

  int depth_ = 0;
};

}  // namespace

std::expected<std::vector<double>, std::string> ParseNumberArray(std::string_view text) {
  NumberArraySax sax;
  bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json,
                            /*strict=*/true);
  if (!ok) {
    if (sax.error.empty()) sax.error = "invalid JSON";
    return std::unexpected(std::move(sax.error));
  }
  return std::move(sax.values);
}

Stats ComputeStats(std::vector<double>& values) {
  Stats s;
  s.count = values.size();
  if (values.empty()) return s;
  s.min = values[0];
  s.max = values[0];
  double mean = 0, m2 = 0;
  std::size_t n = 0;
  for (double x : values) {
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    ++n;
    double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  s.mean = mean;
  s.stddev = std::sqrt(m2 / static_cast<double>(n));
  std::size_t mid = n / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (n % 2 == 1) {
    s.median = upper;
  } else {
    double lower = *std::max_element(values.begin(), values.begin() + mid);
    s.median = lower / 2 + upper / 2;  // no overflow for values near the range's ends
  }
  return s;
}

std::string StatsJson(const Stats& s) {
  json out = {{"count", s.count}};
  if (s.count == 0) {
    for (const char* k : {"min", "max", "mean", "stddev", "median"}) out[k] = nullptr;
  } else {
    out["min"] = s.min;
    out["max"] = s.max;
    out["mean"] = s.mean;
    out["stddev"] = s.stddev;
    out["median"] = s.median;
  }
  return out.dump();
}

std::string ErrorJson(std::string_view message) {
  // Replace invalid UTF-8 (a message may quote the input) rather than throw.
  return json{{"error", std::string(message)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace faasnode::functions
