// http_env.h — the environment of one exec invocation, as the classic OpenFaaS watchdog builds
// it: the deployment's variables, then Http_* variables describing the request.
//
//   Http_Method=POST  Http_Path=/sub  Http_Query=a=1  Http_ContentLength=5
//   Http_Content_Length=5  Http_X_Foo=bar  (one per header, Go-canonical name, '-' -> '_')
//
// Http_Query is absent when the query is empty; Http_Path is "/" when the request had no path
// after /function/NAME. A header repeated keeps its first value; Host is not a header here (Go's
// net/http keeps it apart, so the watchdog never sets Http_Host). Pure: no I/O.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "faasd-shim/store/instance.h"

namespace faasnode::exec {

// Go's textproto.CanonicalMIMEHeaderKey: "x-foo-bar" -> "X-Foo-Bar".
std::string CanonicalHeaderName(std::string_view name);

// Appends "NAME=value" strings for `request` to `out`.
void AppendHttpEnv(const store::Request& request, std::vector<std::string>& out);

}  // namespace faasnode::exec
