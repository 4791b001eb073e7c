// http_date.h — the IMF-fixdate form of HTTP dates ("Sun, 06 Nov 1994 08:49:37 GMT").
#pragma once

#include <ctime>
#include <string_view>

namespace junction::http {

inline constexpr std::size_t kHttpDateLength = 29;

// Writes the IMF-fixdate (RFC 9110 section 5.6.7) for `t` into `out`, which must hold
// kHttpDateLength bytes, and returns a view of it. Never allocates.
std::string_view FormatHttpDate(std::time_t t, char* out);

// FormatHttpDate through a per-thread cache that is reformatted once per second: for a Date
// header on every response. The view is valid until this thread's next call.
std::string_view CachedHttpDate(std::time_t t);

}  // namespace junction::http
