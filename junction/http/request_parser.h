// request_parser.h — incremental HTTP/1.1 request parser, one per server connection.
//
// Feed it bytes as they arrive, in chunks of any size (one byte at a time works), and take
// complete requests with Next(), in order; several pipelined requests in one chunk come out
// one per Next() call. Content-Length and chunked bodies are decoded; limits come from
// ParserOptions. A server loop:
//
//   RequestParser parser(options);
//   for (;;) {
//     std::span<char> space = parser.WritableSpace(4096);  // or parser.Feed(bytes): a copy
//     ssize_t n = conn.Read(space);
//     if (n == 0) break;                                   // peer closed: see FinishAtEof
//     parser.Commit(n);
//     for (;;) {
//       Status<const Request*> r = parser.Next();
//       if (!r) {                                          // answer, then close
//         AppendErrorResponse(out, parser.error_status(), r.error().message());
//         ...
//       }
//       if (*r == nullptr) {                               // more bytes needed
//         if (parser.WantsContinue()) {
//           ResponseWriter::AppendContinue(out);
//           parser.ContinueSent();
//         }
//         break;
//       }
//       Handle(**r);                                       // views valid until next call
//       if (!(*r)->keep_alive) { close after the response }
//     }
//   }
//
// Errors: malformed input gives 400, an HTTP version other than 1.x gives 505, CONNECT and
// transfer codings other than chunked give 501, too many or too large header fields give
// 431, a body over max_body_bytes gives 413 (by Content-Length as soon as the head is read,
// before the body arrives). error_status() says which status to answer with; the Error's
// message says what was wrong, for the client. After an error the parser is dead (every call
// returns the same error) and the connection MUST be closed after answering: the framing of
// whatever follows cannot be trusted.
//
// Copies: Feed() copies its bytes once into the parser's buffer; WritableSpace()/Commit() let
// the reader fill that buffer itself, with no copy. A Content-Length body is handed out where
// it lies in the buffer (no further copy); once its head is parsed, WritableSpace() makes
// room for the whole rest of the body at once, so the body is not moved by a later growth.
// A chunked body is made contiguous in place: each chunk after the first is moved down over
// the chunk framing before it (one memmove per chunk). When the buffer needs room, it is
// compacted (unconsumed bytes, including a request in progress, moved to the front) or
// doubled.
// Memory: the buffer holds the request in progress plus what was fed after it; a loop that
// feeds only when Next() returned nullptr keeps it within the limits plus one read. Chunk
// framing is dropped as it is parsed, so many small chunks do not pin memory.
//
// Thread-safety: none; one parser per connection, used by one thread (uthread) at a time.
// Blocking: never; the parser does no I/O.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "junction/base/error.h"
#include "junction/http/parser_options.h"
#include "junction/http/request.h"

namespace junction::http {

namespace detail {
class MessageParser;
}

class RequestParser {
 public:
  explicit RequestParser(const ParserOptions& options = {});
  ~RequestParser();
  RequestParser(RequestParser&&) noexcept;
  RequestParser& operator=(RequestParser&&) noexcept;

  // Copies `bytes` to the end of the input. Invalidates the last request's views.
  void Feed(std::string_view bytes);
  // Room for at least `min_bytes` more input, to read into directly; then Commit(n) with the
  // number of bytes written (n <= the span's size). Invalidates the last request's views.
  std::span<char> WritableSpace(std::size_t min_bytes);
  void Commit(std::size_t n);

  // The next complete request, nullptr when more bytes are needed, or the error that ends the
  // connection (see error_status()). The request and its views stay valid until the next
  // non-const call on this parser. After a request with keep_alive == false, no request
  // follows: later bytes are dropped and Next() returns nullptr (answer it, then close).
  [[nodiscard]] Status<const Request*> Next();

  // The peer closed its side. Like Next(), but at the end of the input: a complete request
  // still buffered comes out first (call again until nullptr); then nullptr when nothing was
  // in progress (a clean close), or an error (400) for a request cut short.
  [[nodiscard]] Status<const Request*> FinishAtEof();

  // After Next() returned nullptr: true when the request in progress has a complete head with
  // "Expect: 100-continue" and its body has not all arrived, and ContinueSent() was not called
  // for it. Answer with ResponseWriter::AppendContinue() (or with a final status and close),
  // then call ContinueSent(). A body over the limit is refused by Next() before this is true.
  bool WantsContinue() const;
  void ContinueSent();

  // The HTTP status to answer a failed Next() with: 400, 413, 431, 501 or 505; 0 before any
  // error.
  int error_status() const;
  // Bytes held in the input buffer (the current request and any input after it).
  std::size_t buffered_bytes() const;

 private:
  void Fill();

  std::unique_ptr<detail::MessageParser> core_;
  Request request_;
  bool continue_sent_ = false;
};

}  // namespace junction::http
