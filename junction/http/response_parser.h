// response_parser.h — incremental HTTP/1.1 response parser, one per client connection.
//
// The client tells the parser which request each response answers (ExpectResponseTo), in the
// order the requests were sent, because the request decides the framing: a response to HEAD
// has no body whatever its headers say. Then it feeds bytes as they arrive (chunks of any
// size) and takes complete responses with Next(). Bodies are framed by Content-Length, by
// chunked encoding, or by the server closing the connection (then FinishAtEof() completes
// the response). 1xx, 204 and 304 responses have no body. An interim 1xx response (such as
// "100 Continue") comes out of Next() like any other, with is_interim() true; it does not
// answer the request, and the final response follows.
//
//   ResponseParser parser;
//   parser.ExpectResponseTo(Method::kGet);
//   conn.Write(request bytes);
//   for (;;) {
//     Status<const Response*> r = parser.Next();
//     if (!r) { close the connection; fail with r.error() }
//     if (*r == nullptr) {                          // more bytes needed
//       std::span<char> space = parser.WritableSpace(4096);
//       ssize_t n = conn.Read(space);
//       if (n == 0) r = parser.FinishAtEof();       // a body that ran until close
//       else { parser.Commit(n); continue; }
//       ...
//     }
//     if (!(*r)->is_interim()) { use **r; break; }  // else skip "100 Continue" and go on
//   }
//
// Lifetimes, copies and memory are those of RequestParser (request_parser.h): every view in a
// Response points into the parser's buffer and is valid until the parser's next non-const
// call. An error (malformed response, body over max_body_bytes, connection cut mid-message)
// leaves the parser dead: close the connection.
//
// Thread-safety: none; one parser per connection. Blocking: never; it does no I/O.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string_view>

#include "junction/base/error.h"
#include "junction/http/headers.h"
#include "junction/http/method.h"
#include "junction/http/parser_options.h"

namespace junction::http {

namespace detail {
class MessageParser;
}

// One parsed response: views into the ResponseParser's buffer (see above), nothing owned.
struct Response {
  int status = 0;
  std::string_view reason;  // the reason phrase as sent ("OK"); may be empty
  int version_major = 1;
  int version_minor = 1;
  Headers headers;
  Headers trailers;
  std::string_view body;   // decoded; empty for HEAD, 1xx, 204, 304
  bool keep_alive = true;  // the connection may carry another response after this one
  bool chunked = false;

  bool is_interim() const { return status >= 100 && status < 200; }
};

class ResponseParser {
 public:
  // Responses are read with a larger default body limit than requests: 64 MiB.
  static ParserOptions DefaultOptions();

  explicit ResponseParser(const ParserOptions& options = DefaultOptions());
  ~ResponseParser();
  ResponseParser(ResponseParser&&) noexcept;
  ResponseParser& operator=(ResponseParser&&) noexcept;

  // Records that a request with `method` was sent; call once per request, in sending order.
  // A response that arrives with nothing recorded is parsed as a response to GET.
  void ExpectResponseTo(Method method);

  void Feed(std::string_view bytes);
  std::span<char> WritableSpace(std::size_t min_bytes);
  void Commit(std::size_t n);

  // The next complete response (interim ones included), nullptr when more bytes are needed,
  // or an error that ends the connection.
  [[nodiscard]] Status<const Response*> Next();
  // The server closed the connection: like Next() at the end of the input, and it completes
  // a response whose body runs until close. Call again until nullptr; an error if a response
  // was cut short.
  [[nodiscard]] Status<const Response*> FinishAtEof();

  std::size_t buffered_bytes() const;

 private:
  Status<const Response*> Deliver();
  // Next() and FinishAtEof(): parse on (at_eof: the input has ended) and hand out the result.
  Status<const Response*> Advance(bool at_eof);

  std::unique_ptr<detail::MessageParser> core_;
  std::deque<Method> pending_;
  Response response_;
};

}  // namespace junction::http
