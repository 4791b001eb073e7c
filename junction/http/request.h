// request.h — one parsed HTTP/1.1 request: views into the parser's buffer, nothing owned.
//
// Every string_view (target, path, query, header names and values, body) points into the
// RequestParser that produced the request and stays valid until that parser's next non-const
// call (Next, Feed, WritableSpace, Commit, FinishAtEof) or its destruction. Copy what must
// outlive that. `method_name` is the exception: it refers to static storage.
#pragma once

#include <string_view>

#include "junction/http/headers.h"
#include "junction/http/method.h"

namespace junction::http {

struct Request {
  Method method = Method::kGet;
  std::string_view method_name;  // "GET", "PROPFIND", ...: static storage
  std::string_view target;       // the request-target as sent: "/function/echo?x=1"
  std::string_view path;         // "/function/echo" (see SplitTarget in target.h)
  std::string_view query;        // "x=1", without the '?'; "" when there is none
  int version_major = 1;
  int version_minor = 1;
  Headers headers;
  Headers trailers;              // fields after a chunked body's last chunk; usually empty
  std::string_view body;         // decoded: chunked framing removed, chunks joined
  bool keep_alive = true;        // the connection may carry another request after this one
  bool expect_continue = false;  // HTTP/1.1 and "Expect: 100-continue"
  bool chunked = false;          // the body came with Transfer-Encoding: chunked

  bool is_head() const { return method == Method::kHead; }
};

}  // namespace junction::http
