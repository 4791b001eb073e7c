// safetensors.h — a minimal reader and writer of the safetensors format (bf16 tensors).
//
// Format (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON {"name": {"dtype": "BF16", "shape": [..], "data_offsets": [begin, end]},
// "__metadata__": {..}}, then the data block; offsets are relative to the data block.
//
// SafetensorsReader::Open reads and validates only the header; ReadBf16 then reads one tensor.
// A reader is immutable after Open and safe to use from several threads (each read opens the
// file itself). All calls block on file I/O.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "functions/swiglu-mlp/bf16.h"
#include "junction/base/error.h"

namespace swiglu {

struct SafetensorsTensorInfo {
  std::string dtype;           // "BF16", "F32", ... as written in the file
  std::vector<int64_t> shape;  // outermost first
  uint64_t begin = 0;          // byte offsets into the data block, [begin, end)
  uint64_t end = 0;
};

class SafetensorsReader {
 public:
  // Errors: kIo if the file cannot be opened or read; kInvalidArgument if the header is not a
  // valid safetensors header (the message says which check failed).
  static junction::Status<SafetensorsReader> Open(const std::string& path);

  const std::map<std::string, SafetensorsTensorInfo>& tensors() const { return tensors_; }

  // The tensor `name` as bf16 values (row-major). Errors: kNotFound (no such tensor),
  // kInvalidArgument (dtype is not BF16 or shape differs from `expected_shape`), kIo.
  junction::Status<std::vector<Bf16>> ReadBf16(std::string_view name,
                                               std::span<const int64_t> expected_shape) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  std::map<std::string, SafetensorsTensorInfo> tensors_;
};

// One tensor to write: bf16 data (not owned; must outlive the WriteSafetensorsBf16 call).
struct SafetensorsBf16View {
  std::string name;
  std::vector<int64_t> shape;
  std::span<const Bf16> data;  // product(shape) values
};

// Writes a new file at `path` (replacing any). Errors: kInvalidArgument (data size differs
// from the shape, duplicate name), kIo.
junction::Status<void> WriteSafetensorsBf16(const std::string& path,
                                            std::span<const SafetensorsBf16View> tensors);

}  // namespace swiglu
