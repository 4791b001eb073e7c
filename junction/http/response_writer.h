// response_writer.h — serializes one HTTP/1.1 response into a caller-owned buffer.
//
// The writer appends bytes to a std::string the caller owns (it must outlive the writer) and
// never clears it, so several responses (pipelining) can be gathered into one buffer and sent
// with one write. Once that buffer has grown to the largest response, writing allocates
// nothing. The writer owns the framing: it writes Content-Length or Transfer-Encoding, and
// Connection, from what the request allows and what the caller asks; AddHeader refuses those
// three.
//
//   ResponseWriter w(out, ContextFor(request));
//   w.Start(200);
//   if (auto s = w.AddHeader("Content-Type", "text/plain"); !s) { ... }
//   w.Finish(body);                        // Content-Length framing, body appended
//
//   w.Start(200); w.BeginChunked();        // streaming: chunked for HTTP/1.1 clients,
//   w.WriteChunk(part1); w.WriteChunk(part2);  // raw bytes and close for HTTP/1.0 ones
//   w.EndChunked();
//   if (!w.keep_alive()) close the connection after sending out;
//
// Rules kept: a response to HEAD gets the headers a GET would get and no body bytes; 1xx, 204
// and 304 responses get no body and no Content-Length; HTTP/1.0 clients get
// "Connection: keep-alive" when the connection stays open and never get chunked encoding.
// Calls out of order (Finish before Start, AddHeader after the head) are bugs and abort in
// debug builds.
//
// Thread-safety: none; one writer per response, used by one thread. Blocking: never.
#pragma once

#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <string_view>

#include "junction/base/error.h"
#include "junction/http/headers.h"
#include "junction/http/request.h"

namespace junction::http {

// What a response depends on from the request it answers.
struct ResponseContext {
  bool head = false;       // the request was HEAD: write headers only
  bool keep_alive = true;  // the request allows another request on the connection
  bool http10 = false;     // the client speaks HTTP/1.0: no chunked, explicit keep-alive
};

ResponseContext ContextFor(const Request& request);

class ResponseWriter {
 public:
  // "HTTP/1.1 100 Continue\r\n\r\n": the interim answer to "Expect: 100-continue", written
  // before the final response (RequestParser::WantsContinue says when).
  static void AppendContinue(std::string& out);

  // Appends to `out`, which must outlive the writer. Bytes already in `out` are kept.
  ResponseWriter(std::string& out, const ResponseContext& context);

  // The status line; first call. `status` must be in 100..599.
  void Start(int status);
  // A header field. Refused (kInvalidArgument, nothing written) when the name is not an
  // RFC 9110 token, the value holds CR, LF or NUL, or the name is Content-Length,
  // Transfer-Encoding or Connection (the writer's own: use Finish/BeginChunked/SetClose).
  [[nodiscard]] Status<void> AddHeader(std::string_view name, std::string_view value);
  // Header lines the caller formatted itself ("Name: value" CRLF each, AppendHeaderLine),
  // appended verbatim: for fields a server generates per response and vouches for (names are
  // tokens, values hold no CR, LF or NUL, none is a framing field), so they skip AddHeader's
  // checks and copies. Debug builds check them anyway.
  void AddHeaderLines(std::string_view lines);
  // "Date: <IMF-fixdate>" for `now` (RFC 9110 section 5.6.7), formatted once per second per
  // thread.
  void AddDate(std::time_t now);
  // Close the connection after this response ("Connection: close"). Before the head ends.
  void SetClose() { close_ = true; }

  // Ends the head with "Content-Length: n"; the caller then sends exactly n body bytes
  // itself (none when body_allowed() is false). For bodies sent without copying them here.
  void EndHeaders(std::uint64_t content_length);
  // Ends the head with the body's Content-Length and appends the body (unless HEAD, 1xx, 204
  // or 304). The response is complete.
  void Finish(std::string_view body);

  // Ends the head for a body streamed in pieces: chunked for HTTP/1.1, close-delimited (and
  // Connection: close) for HTTP/1.0. Then WriteChunk() any number of times and EndChunked().
  void BeginChunked();
  // Appends one piece of body; an empty piece writes nothing (it would end the body).
  void WriteChunk(std::string_view data);
  // Ends a chunked body: the last chunk, then `trailers` (validated like AddHeader; on error
  // nothing is written and the body is still open).
  [[nodiscard]] Status<void> EndChunked(std::span<const Header> trailers = {});

  // Whether a body goes on the wire: false for HEAD, 1xx, 204 and 304.
  bool body_allowed() const { return body_allowed_; }
  // Whether the connection stays open after this response; final once the head has ended.
  bool keep_alive() const { return !close_; }
  int status() const { return status_; }

 private:
  enum class State { kIdle, kHeaders, kBody, kChunked, kDone };
  void EndHead();

  std::string& out_;
  ResponseContext context_;
  State state_ = State::kIdle;
  int status_ = 0;
  bool close_ = false;
  bool body_allowed_ = true;
  bool chunked_ = false;  // false while streaming to an HTTP/1.0 client: raw bytes until close
};

}  // namespace junction::http
