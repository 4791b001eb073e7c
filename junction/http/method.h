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

}  // namespace junction::http
