// wire.cc — numbers, header fields and chunks as bytes.
#include "junction/http/wire.h"

#include <charconv>

#include "junction/base/decimal.h"

namespace junction::http::detail {

void AppendDecimal(std::string& out, std::uint64_t v) {
  char digits[20];
  out.append(junction::Decimal(digits, v));  // every reply's Content-Length
}

void AppendHex(std::string& out, std::uint64_t v) {
  char digits[16];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), v, 16);
  out.append(digits, end);
}

Status<void> CheckField(std::string_view name, std::string_view value) {
  if (!IsToken(name)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "header name \"" + std::string(name.substr(0, 64)) +
                         "\" is not an HTTP token (RFC 9110 5.6.2); use letters, digits and "
                         "!#$%&'*+-.^_`|~ only");
  }
  if (!IsValidFieldValue(value)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the value of header \"" + std::string(name) +
                         "\" contains CR, LF or NUL, which would break the message framing; "
                         "remove those bytes");
  }
  return {};
}

Status<void> CheckNotFraming(std::string_view name, std::string_view writer) {
  if (EqualsIgnoreCase(name, "content-length") || EqualsIgnoreCase(name, "transfer-encoding") ||
      EqualsIgnoreCase(name, "connection")) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "header \"" + std::string(name) + "\" is set by the " + std::string(writer) +
                         " itself; use Finish/EndHeaders (Content-Length), BeginChunked "
                         "(chunked) or SetClose (Connection)");
  }
  return {};
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": ");
  out.append(value);
  out.append("\r\n");
}

void AppendChunk(std::string& out, std::string_view data) {
  if (data.empty()) return;
  AppendHex(out, data.size());
  out.append("\r\n");
  out.append(data);
  out.append("\r\n");
}

void AppendLastChunk(std::string& out, std::span<const Header> trailers) {
  out.append("0\r\n");
  for (const Header& t : trailers) AppendField(out, t.name, t.value);
  out.append("\r\n");
}

}  // namespace junction::http::detail
