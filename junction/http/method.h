// method.h — the request methods junction tells apart; any other token is kOther.
#pragma once

#include <cstdint>
#include <string_view>

namespace junction::http {

enum class Method : std::uint8_t {
  kGet,
  kHead,
  kPost,
  kPut,
  kDelete,
  kPatch,
  kOptions,
  kTrace,
  kConnect,
  kOther,  // a method llhttp knows (PROPFIND, PURGE, ...) that junction does not name
};

// "GET" for kGet, ...; "" for kOther. The view refers to static storage.
std::string_view MethodName(Method method);

// The method a name (exact, upper case) stands for: "GET" is kGet, ...; kOther for any other
// text. The inverse of MethodName for the named methods.
Method MethodFromName(std::string_view name);

}  // namespace junction::http
