// safetensors.cc — safetensors header parsing (nlohmann::json), bf16 tensor reads and writes.
#include "functions/swiglu-mlp/safetensors.h"

#include <bit>
#include <cstdio>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

namespace swiglu {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this reader copies it as is");

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

// The header is JSON text; real files stay far below this (a 72B checkpoint shard: ~100 KiB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Status<File> OpenFile(const std::string& path, const char* mode) {
  File f(std::fopen(path.c_str(), mode));
  if (!f) {
    return std::unexpected(
        junction::Error::FromErrno("cannot open safetensors file '" + path + "'"));
  }
  return f;
}

std::string ShapeString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Status<void> Invalid(const std::string& path, const std::string& what) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "'" + path + "' is not a valid safetensors file: " + what);
}

}  // namespace

Status<SafetensorsReader> SafetensorsReader::Open(const std::string& path) {
  auto file = OpenFile(path, "rb");
  if (!file) return std::unexpected(file.error());
  std::FILE* f = file->get();
  if (std::fseek(f, 0, SEEK_END) != 0) return std::unexpected(junction::Error::FromErrno("seek"));
  long size_l = std::ftell(f);
  if (size_l < 0) return std::unexpected(junction::Error::FromErrno("ftell"));
  uint64_t file_size = static_cast<uint64_t>(size_l);
  std::rewind(f);

  uint8_t len_bytes[8];
  if (file_size < 8 || std::fread(len_bytes, 1, 8, f) != 8) {
    auto e = Invalid(path, "shorter than the 8-byte header length");
    return std::unexpected(e.error());
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  if (header_len > kMaxHeaderBytes || header_len > file_size - 8) {
    auto e = Invalid(path, "header length " + std::to_string(header_len) +
                               " exceeds the file size or the 100 MiB limit");
    return std::unexpected(e.error());
  }
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f) != header_len) {
    return std::unexpected(junction::Error::FromErrno("reading the header of '" + path + "'"));
  }

  nlohmann::json j = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    auto e = Invalid(path, "the header is not a JSON object");
    return std::unexpected(e.error());
  }
  SafetensorsReader reader;
  reader.path_ = path;
  reader.data_start_ = 8 + header_len;
  const uint64_t data_size = file_size - reader.data_start_;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const nlohmann::json& t = it.value();
    auto bad = [&](const std::string& what) {
      return std::unexpected(Invalid(path, "tensor '" + it.key() + "': " + what).error());
    };
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") ||
        !t.contains("data_offsets")) {
      return bad("needs dtype, shape and data_offsets");
    }
    const auto& dtype = t["dtype"];
    const auto& shape = t["shape"];
    const auto& offsets = t["data_offsets"];
    if (!dtype.is_string() || !shape.is_array() || !offsets.is_array() || offsets.size() != 2 ||
        !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return bad("dtype must be a string, shape an array, data_offsets two unsigned integers");
    }
    SafetensorsTensorInfo info;
    info.dtype = dtype.get<std::string>();
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) return bad("shape entries must be unsigned integers");
      info.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    }
    info.begin = offsets[0].get<uint64_t>();
    info.end = offsets[1].get<uint64_t>();
    if (info.begin > info.end || info.end > data_size) {
      return bad("data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
                 ") fall outside the " + std::to_string(data_size) + "-byte data block");
    }
    reader.tensors_.emplace(it.key(), std::move(info));
  }
  return reader;
}

Status<std::vector<Bf16>> SafetensorsReader::ReadBf16(
    std::string_view name, std::span<const int64_t> expected_shape) const {
  auto it = tensors_.find(std::string(name));
  if (it == tensors_.end()) {
    return MakeError(ErrorCode::kNotFound,
                     "tensor '" + std::string(name) + "' is not in '" + path_ + "'");
  }
  const SafetensorsTensorInfo& info = it->second;
  if (info.dtype != "BF16") {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tensor '" + it->first + "' in '" + path_ + "' has dtype " + info.dtype +
                         "; expected BF16 (convert the checkpoint to bfloat16)");
  }
  if (!std::equal(info.shape.begin(), info.shape.end(), expected_shape.begin(),
                  expected_shape.end())) {
    return MakeError(ErrorCode::kInvalidArgument, "tensor '" + it->first + "' in '" + path_ +
                                                      "' has shape " + ShapeString(info.shape) +
                                                      "; expected " + ShapeString(expected_shape) +
                                                      " (is the model size right?)");
  }
  uint64_t count = 1;
  for (int64_t d : info.shape) count *= static_cast<uint64_t>(d);
  if (info.end - info.begin != count * sizeof(Bf16)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tensor '" + it->first + "' in '" + path_ + "' spans " +
                         std::to_string(info.end - info.begin) + " bytes; its shape needs " +
                         std::to_string(count * sizeof(Bf16)));
  }
  auto file = OpenFile(path_, "rb");
  if (!file) return std::unexpected(file.error());
  std::vector<Bf16> out(count);
  if (std::fseek(file->get(), static_cast<long>(data_start_ + info.begin), SEEK_SET) != 0 ||
      std::fread(out.data(), sizeof(Bf16), count, file->get()) != count) {
    return std::unexpected(
        junction::Error::FromErrno("reading tensor '" + it->first + "' from '" + path_ + "'"));
  }
  return out;
}

Status<void> WriteSafetensorsBf16(const std::string& path,
                                  std::span<const SafetensorsBf16View> tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsBf16View& t : tensors) {
    uint64_t count = 1;
    for (int64_t d : t.shape) count *= static_cast<uint64_t>(d);
    if (count != t.data.size()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "tensor '" + t.name + "' has " + std::to_string(t.data.size()) +
                           " values but shape " + ShapeString(t.shape) + " needs " +
                           std::to_string(count));
    }
    if (!names.insert(t.name).second) {
      return MakeError(ErrorCode::kInvalidArgument, "tensor name '" + t.name + "' given twice");
    }
    uint64_t bytes = count * sizeof(Bf16);
    header[t.name] = {
        {"dtype", "BF16"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // The data block is customarily 8-byte aligned: pad the header with spaces.
  while (text.size() % 8 != 0) text += ' ';
  uint8_t len_bytes[8];
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<uint8_t>(len >> (8 * i));

  auto file = OpenFile(path, "wb");
  if (!file) return std::unexpected(file.error());
  std::FILE* f = file->get();
  bool ok = std::fwrite(len_bytes, 1, 8, f) == 8 && std::fwrite(text.data(), 1, len, f) == len;
  for (const SafetensorsBf16View& t : tensors) {
    ok = ok && std::fwrite(t.data.data(), sizeof(Bf16), t.data.size(), f) == t.data.size();
  }
  if (!ok || std::fflush(f) != 0) {
    return std::unexpected(junction::Error::FromErrno("writing '" + path + "'"));
  }
  return {};
}

}  // namespace swiglu
