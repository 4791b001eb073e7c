// request_writer.h — serializes one HTTP/1.1 request into a caller-owned buffer.
//
// The client side of response_writer.h.
//
// Same buffer contract as ResponseWriter: bytes are appended to a std::string the caller owns
// (it must outlive the writer), nothing is cleared, and nothing is allocated once the buffer
// has grown. The writer owns the framing (Content-Length, Transfer-Encoding, Connection);
// the caller adds Host and everything else.
//
//   RequestWriter w(out);
//   if (auto s = w.Start(Method::kPost, "/function/echo?x=1"); !s) { ... }
//   (void)w.AddHeader("Host", "127.0.0.1:8080");
//   w.Finish(body);
//   response_parser.ExpectResponseTo(Method::kPost);
//
// For "Expect: 100-continue", add that header, call EndHeaders(body.size()), send the head,
// wait for the interim 100 (ResponseParser) and then send the body bytes.
//
// Thread-safety: none; one writer per request, used by one thread. Blocking: never.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "junction/base/error.h"
#include "junction/http/headers.h"
#include "junction/http/method.h"

namespace junction::http {

class RequestWriter {
 public:
  // Appends to `out`, which must outlive the writer. Bytes already in `out` are kept.
  explicit RequestWriter(std::string& out) : out_(out) {}

  // The request line; first call. Refused (kInvalidArgument, nothing written) for
  // Method::kOther and for a target that is empty or holds a space, CR, LF or NUL.
  [[nodiscard]] Status<void> Start(Method method, std::string_view target);
  // A header field; refused like ResponseWriter::AddHeader (bad name, CR/LF/NUL in the
  // value, or a framing field).
  [[nodiscard]] Status<void> AddHeader(std::string_view name, std::string_view value);
  // Ask the server to close the connection after its response ("Connection: close").
  void SetClose() { close_ = true; }

  // Ends the head with "Content-Length: n" (left out when n is 0 and the method carries no
  // content, RFC 9110 8.6); the caller then sends exactly n body bytes itself.
  void EndHeaders(std::uint64_t content_length);
  // Ends the head and appends `body`.
  void Finish(std::string_view body);

  // A body streamed in chunks (Transfer-Encoding: chunked), then WriteChunk()s, EndChunked().
  void BeginChunked();
  void WriteChunk(std::string_view data);
  [[nodiscard]] Status<void> EndChunked(std::span<const Header> trailers = {});

  Method method() const { return method_; }

 private:
  enum class State { kIdle, kHeaders, kBody, kChunked, kDone };
  void EndHead();

  std::string& out_;
  State state_ = State::kIdle;
  Method method_ = Method::kGet;
  bool close_ = false;
};

}  // namespace junction::http
