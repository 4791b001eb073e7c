// wire.h — internal: numbers, checked header fields and chunks, shared by both writers.
//
// Not part of junction/http's API; use ResponseWriter or RequestWriter.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "junction/base/error.h"
#include "junction/http/headers.h"

namespace junction::http::detail {

void AppendDecimal(std::string& out, std::uint64_t v);
void AppendHex(std::string& out, std::uint64_t v);

// Refuses (kInvalidArgument) a name that is not a token or a value with CR, LF or NUL.
Status<void> CheckField(std::string_view name, std::string_view value);
// Refuses Content-Length, Transfer-Encoding and Connection: the writers own the framing.
Status<void> CheckNotFraming(std::string_view name, std::string_view writer);
// "name: value\r\n", unchecked.
void AppendField(std::string& out, std::string_view name, std::string_view value);

// One chunk of a chunked body: "<hex size>\r\n<data>\r\n"; nothing for empty data.
void AppendChunk(std::string& out, std::string_view data);
// The last chunk and trailer section: "0\r\n" trailers "\r\n". Trailers must be checked.
void AppendLastChunk(std::string& out, std::span<const Header> trailers);

}  // namespace junction::http::detail
