// parser_options.h — limits a request or response parser enforces on one message.
#pragma once

#include <cstddef>

namespace junction::http {

struct ParserOptions {
  // Request line (status line) plus header fields plus the blank line, in bytes. A request
  // past it is refused with 431; trailers of a chunked body have the same budget.
  std::size_t max_header_bytes = 16 * 1024;
  // Header fields per message (trailers counted apart). A request past it is refused with 431.
  std::size_t max_header_count = 100;
  // Decoded body bytes per message. A request past it (by Content-Length, known before the
  // body arrives, or by the sum of its chunks) is refused with 413.
  std::size_t max_body_bytes = 8 * 1024 * 1024;
  // Bytes the input buffer starts with; it doubles when a message needs more.
  std::size_t initial_buffer_bytes = 4096;
  // Refuse (400) an HTTP/1.1 request without exactly one Host field (RFC 9112 section 3.2).
  bool require_host = true;
};

}  // namespace junction::http
