// target.h — a request-target split into path and query (RFC 9112 section 3.2).
#pragma once

#include <string_view>

namespace junction::http {

struct Target {
  std::string_view path;   // "/function/echo"; "*" for asterisk-form; "/" if absolute-form had none
  std::string_view query;  // "a=1&b=2": the bytes after the first '?', without it; "" if none
};

// Splits `target` without copying: both views point into `target`. An absolute-form target
// ("http://host:8080/p?q") loses its scheme and authority; a fragment ("#...") is dropped.
// No percent-decoding is done. Never fails: a malformed target yields whatever path it has.
Target SplitTarget(std::string_view target);

}  // namespace junction::http
