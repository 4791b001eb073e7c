// json_error.h — error bodies as JSON ({"error": "..."}) and whole error responses.
#pragma once

#include <string>
#include <string_view>

#include "junction/http/response_writer.h"

namespace junction::http {

// Appends {"error":"<message>"} to `out`, escaping the message as a JSON string (quotes,
// backslashes and control characters; other bytes are copied as they are).
void AppendJsonError(std::string& out, std::string_view message);

// Appends a complete response: `status`, Content-Type: application/json and the JSON error
// body. For a request the parser refused, pass a context with keep_alive = false: the
// response then says "Connection: close", and the caller closes after sending it.
void AppendErrorResponse(std::string& out, int status, std::string_view message,
                         const ResponseContext& context = {.keep_alive = false});

}  // namespace junction::http
