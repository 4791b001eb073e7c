// codec.h — the swiglu-mlp function's wire formats: X in, Y out, as JSON or raw binary.
//
// JSON (Content-Type: application/json):
//   request   {"model": "0.5b", "tokens": [[x_0 ... x_{hidden-1}], ...]}    model optional
//   response  {"model": "0.5B", "hidden": 896, "intermediate": 4864, "tokens": 2,
//              "path": "cpu-avx2", "y": [[...], ...]}
//   Numbers are rounded to bf16 (to nearest, ties to even) on the way in; each y value is the
//   bf16 result written as the shortest decimal that reads back as the same value (NaN and
//   infinities, which JSON cannot carry, are written as null; the binary form keeps them).
// Binary (Content-Type: application/octet-stream):
//   request   tokens × hidden little-endian values, row-major, no header; the model and dtype
//             in the query (?model=7b&dtype=f32) or headers (X-Swiglu-Model, X-Swiglu-Dtype);
//             dtype "bf16" (default) or "f32" (rounded to bf16)
//   response  tokens × hidden values of the same dtype (f32: the bf16 result, widened exactly)
//
// Every parse error is a message that says what was wrong and what to send instead. All
// functions are pure and thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "junction/base/error.h"

namespace swiglu {

enum class WireDtype { kBf16, kF32 };
junction::Status<WireDtype> ParseWireDtype(std::string_view s);  // "bf16" | "f32"
std::string_view WireDtypeName(WireDtype d);

// The JSON request: its model name (empty: not given) and its token rows, unchecked widths.
struct JsonRequest {
  std::string model;
  std::vector<std::vector<Bf16>> rows;
};
// Errors (kInvalidArgument): not JSON, not an object, "tokens" missing/empty/not an array of
// arrays, a value that is not a finite number (the message names tokens[i][j]), "model" not a
// string, an unknown key. `max_rows` bounds the rows parsed (the message says the limit).
junction::Status<JsonRequest> ParseJsonRequest(std::string_view body, int max_rows,
                                               std::string_view max_rows_name);

// Flattens rows into X[tokens, hidden]. Error (kInvalidArgument) naming the first row whose
// width is not `hidden`, and the model it was checked against.
junction::Status<std::vector<Bf16>> FlattenRows(const std::vector<std::vector<Bf16>>& rows,
                                                int hidden, std::string_view model);

// Binary body -> X; *tokens set. Errors (kInvalidArgument): empty, or a length that is not a
// multiple of one row (hidden × the dtype's size): the message gives both and the remainder.
junction::Status<std::vector<Bf16>> ParseBinaryBody(std::string_view body, int hidden,
                                                    WireDtype dtype, std::string_view model,
                                                    int* tokens);

struct JsonReplyInfo {
  std::string_view model;
  int hidden = 0;
  int intermediate = 0;
  int tokens = 0;
  std::string_view path;
};
std::string EncodeJsonReply(const JsonReplyInfo& info, std::span<const Bf16> y);
std::string EncodeBinaryReply(std::span<const Bf16> y, WireDtype dtype);

// {"error": message}
std::string ErrorJson(std::string_view message);

}  // namespace swiglu
