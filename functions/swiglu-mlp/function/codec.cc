// codec.cc — JSON (nlohmann) and raw binary encodings of the swiglu-mlp function.
#include "functions/swiglu-mlp/function/codec.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace swiglu {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "the binary wire format is little-endian, as is every machine this node runs on");

Status<WireDtype> ParseWireDtype(std::string_view s) {
  if (s == "bf16" || s == "BF16") return WireDtype::kBf16;
  if (s == "f32" || s == "F32" || s == "float32") return WireDtype::kF32;
  return MakeError(ErrorCode::kInvalidArgument,
                   "dtype '" + std::string(s.substr(0, 32)) + "' is not a wire dtype; use bf16 " +
                       "(2 bytes a value) or f32 (4 bytes), as in ?dtype=f32");
}

std::string_view WireDtypeName(WireDtype d) {
  return d == WireDtype::kBf16 ? "bf16" : "f32";
}

namespace {
std::string At(size_t i, size_t j) {
  return "tokens[" + std::to_string(i) + "][" + std::to_string(j) + "]";
}
}  // namespace

Status<JsonRequest> ParseJsonRequest(std::string_view body, int max_rows,
                                     std::string_view max_rows_name) {
  constexpr std::string_view kShape =
      R"(; send {"model": "0.5b", "tokens": [[x_0, ..., x_hidden-1], ...]})";
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the body is not valid JSON" + std::string(kShape) +
                         ", or raw values with Content-Type: application/octet-stream");
  }
  if (!doc.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the body is JSON but not an object" + std::string(kShape));
  }
  JsonRequest out;
  for (const auto& [key, value] : doc.items()) {
    if (key == "model") {
      if (!value.is_string()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "\"model\" must be a string such as \"0.5b\" or \"7B\"");
      }
      out.model = value.get<std::string>();
    } else if (key != "tokens") {
      return MakeError(ErrorCode::kInvalidArgument,
                       "unknown key \"" + key.substr(0, 32) + "\"; the keys are model and tokens");
    }
  }
  auto it = doc.find("tokens");
  if (it == doc.end() || !it->is_array() || it->empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "\"tokens\" must be a non-empty array of rows" + std::string(kShape));
  }
  if (it->size() > static_cast<size_t>(max_rows)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::to_string(it->size()) + " tokens; this instance takes at most " +
                         std::to_string(max_rows) + " per call (" + std::string(max_rows_name) +
                         "): split the request");
  }
  out.rows.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& row = (*it)[i];
    if (!row.is_array()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "tokens[" + std::to_string(i) + "] is not an array; each token is a row " +
                           "of hidden numbers");
    }
    std::vector<Bf16>& r = out.rows.emplace_back();
    r.reserve(row.size());
    for (size_t j = 0; j < row.size(); ++j) {
      const json& v = row[j];
      if (!v.is_number()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         At(i, j) + " is " + v.dump().substr(0, 32) + ", not a number");
      }
      const double d = v.get<double>();
      if (!std::isfinite(d)) {
        return MakeError(ErrorCode::kInvalidArgument, At(i, j) + " is not a finite number");
      }
      r.push_back(Bf16FromDouble(d));
    }
  }
  return out;
}

Status<std::vector<Bf16>> FlattenRows(const std::vector<std::vector<Bf16>>& rows, int hidden,
                                      std::string_view model) {
  std::vector<Bf16> x;
  x.reserve(rows.size() * static_cast<size_t>(hidden));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != static_cast<size_t>(hidden)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "tokens[" + std::to_string(i) + "] has " + std::to_string(rows[i].size()) +
                           " values; model " + std::string(model) + " takes rows of hidden = " +
                           std::to_string(hidden));
    }
    x.insert(x.end(), rows[i].begin(), rows[i].end());
  }
  return x;
}

Status<std::vector<Bf16>> ParseBinaryBody(std::string_view body, int hidden, WireDtype dtype,
                                          std::string_view model, int* tokens) {
  const size_t value_size = dtype == WireDtype::kBf16 ? 2 : 4;
  const size_t row = value_size * static_cast<size_t>(hidden);
  if (body.empty() || body.size() % row != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a binary body of " + std::to_string(body.size()) + " bytes is not a whole " +
                         "number of token rows: model " + std::string(model) + " takes rows of " +
                         std::to_string(hidden) + " " + std::string(WireDtypeName(dtype)) +
                         " values = " + std::to_string(row) + " bytes (" +
                         std::to_string(body.size() % row) + " bytes left over)");
  }
  const size_t n = body.size() / value_size;
  std::vector<Bf16> x(n);
  if (dtype == WireDtype::kBf16) {
    std::memcpy(x.data(), body.data(), body.size());
  } else {
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, body.data() + 4 * i, 4);
      x[i] = Bf16FromFloat(f);
    }
  }
  *tokens = static_cast<int>(body.size() / row);
  return x;
}

std::string EncodeJsonReply(const JsonReplyInfo& info, std::span<const Bf16> y) {
  std::string out;
  out.reserve(64 + y.size() * 10);
  out += "{\"model\":\"";
  out += info.model;
  out += "\",\"hidden\":" + std::to_string(info.hidden) +
         ",\"intermediate\":" + std::to_string(info.intermediate) +
         ",\"tokens\":" + std::to_string(info.tokens) + ",\"path\":\"";
  out += info.path;
  out += "\",\"y\":[";
  char buf[32];
  for (int t = 0; t < info.tokens; ++t) {
    out += t == 0 ? "[" : ",[";
    for (int k = 0; k < info.hidden; ++k) {
      if (k != 0) out += ',';
      const float f = Bf16ToFloat(y[static_cast<size_t>(t) * info.hidden + k]);
      if (!std::isfinite(f)) {
        out += "null";
        continue;
      }
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);  // shortest round trip
      out.append(buf, end);
    }
    out += ']';
  }
  out += "]}";
  return out;
}

std::string EncodeBinaryReply(std::span<const Bf16> y, WireDtype dtype) {
  if (dtype == WireDtype::kBf16) {
    return std::string(reinterpret_cast<const char*>(y.data()), y.size() * 2);
  }
  std::string out(y.size() * 4, '\0');
  for (size_t i = 0; i < y.size(); ++i) {
    const float f = Bf16ToFloat(y[i]);
    std::memcpy(out.data() + 4 * i, &f, 4);
  }
  return out;
}

std::string ErrorJson(std::string_view message) {
  return json{{"error", message}}.dump();
}

}  // namespace swiglu
