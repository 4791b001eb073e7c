// method.cc — method names.
#include "junction/http/method.h"

namespace junction::http {

std::string_view MethodName(Method method) {
  switch (method) {
    case Method::kGet:
      return "GET";
    case Method::kHead:
      return "HEAD";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kDelete:
      return "DELETE";
    case Method::kPatch:
      return "PATCH";
    case Method::kOptions:
      return "OPTIONS";
    case Method::kTrace:
      return "TRACE";
    case Method::kConnect:
      return "CONNECT";
    case Method::kOther:
      return "";
  }
  return "";
}

Method MethodFromName(std::string_view name) {
  for (Method m : {Method::kGet, Method::kHead, Method::kPost, Method::kPut, Method::kDelete, Method::kPatch,
                   Method::kOptions, Method::kTrace, Method::kConnect}) {
    if (MethodName(m) == name) return m;
  }
  return Method::kOther;
}

}  // namespace junction::http
