// message_parser.h — internal: the buffer and llhttp driver behind both parsers.
//
// Not part of junction/http's API; include request_parser.h or response_parser.h instead.
//
// Bytes are appended to one growable buffer and parsed in place; everything the parser learns
// about a message is kept as offsets into that buffer, so the buffer may be compacted or grown
// between llhttp calls. llhttp is paused at the end of every message, so Parse() hands out
// messages one at a time and in order, however many a buffer holds.
//
// Copies: Append() copies its bytes once into the buffer (WritableSpace()/Commit() let a
// reader fill the buffer directly, with no copy). A Content-Length body is then used where it
// lies. Chunks of a chunked body are moved down in place to sit right after the previous
// chunk, so the body is contiguous (a memmove of each chunk after the first). Compaction moves
// the unparsed tail (and the message in progress) to the front when the buffer needs room.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "junction/base/error.h"
#include "junction/http/parser_options.h"

namespace junction::http::detail {

struct Span {
  std::size_t off = 0;
  std::size_t len = 0;
};

struct FieldSpan {
  Span name;
  Span value;
};

class MessageParser {
 public:
  enum class Type { kRequest, kResponse };
  enum class Step { kNeedMore, kMessage, kError };

  MessageParser(Type type, const ParserOptions& options);
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  std::span<char> WritableSpace(std::size_t min_bytes);
  void Commit(std::size_t n);
  void Append(std::string_view bytes);

  // Parses buffered bytes until a message completes (kMessage: its fields below are valid
  // until the next non-const call), the buffer runs dry (kNeedMore) or the input is refused
  // (kError: error() and error_status() say why; every later call returns kError). After a
  // message without keep-alive, later bytes are dropped unparsed and kNeedMore returned.
  Step Parse();
  // The peer closed its side: completes a message whose body runs until close (responses
  // without Content-Length or chunked). kNeedMore when nothing was in progress.
  Step FinishAtEof();

  // Set before Parse(): the next final response answers a HEAD request and has no body.
  void set_response_to_head(bool head) { response_to_head_ = head; }

  std::string_view View(Span s) const { return {buf_.get() + s.off, s.len}; }
  Span url() const { return url_; }
  Span reason() const { return reason_; }
  Span body() const { return body_; }
  const std::vector<FieldSpan>& headers() const { return headers_; }
  const std::vector<FieldSpan>& trailers() const { return trailers_; }
  const llhttp_t& llhttp() const { return parser_; }
  bool keep_alive() const { return keep_alive_; }
  bool chunked() const { return chunked_; }
  bool expect_continue() const { return expect_continue_; }

  // The message in progress has a complete head but not yet a complete body.
  bool in_body() const { return in_message_ && headers_complete_; }
  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }
  int error_status() const { return error_status_; }
  std::size_t buffered_bytes() const { return end_ - begin_; }

 private:
  // Releases the message handed out by the last kMessage, if any.
  void Release();
  // Makes room for `n` more bytes at the end of the buffer.
  void Reserve(std::size_t n);
  // Moves unparsed bytes down onto the end of a chunked body, dropping chunk framing.
  void ReclaimBodyGap();
  Step Fail(int http_status, ErrorCode code, std::string message);
  Step FailFromLlhttp(llhttp_errno_t err);
  // Records a span callback's bytes into `span`, which grows when the span arrives in pieces.
  void Extend(Span& span, const char* at, std::size_t len);
  std::size_t Offset(const char* p) const { return std::size_t(p - buf_.get()); }
  int CheckHead();

  static int OnMessageBegin(llhttp_t* p);
  static int OnUrl(llhttp_t* p, const char* at, std::size_t len);
  static int OnStatus(llhttp_t* p, const char* at, std::size_t len);
  static int OnHeaderField(llhttp_t* p, const char* at, std::size_t len);
  static int OnHeaderFieldComplete(llhttp_t* p);
  static int OnHeaderValue(llhttp_t* p, const char* at, std::size_t len);
  static int OnHeaderValueComplete(llhttp_t* p);
  static int OnHeadersComplete(llhttp_t* p);
  static int OnBody(llhttp_t* p, const char* at, std::size_t len);
  static int OnMessageComplete(llhttp_t* p);
  static const llhttp_settings_t& Settings();

  Type type_;
  ParserOptions options_;
  llhttp_t parser_;

  // Buffer: [0, begin_) free, [begin_, parse_pos_) parsed, [parse_pos_, end_) not yet parsed.
  std::unique_ptr<char[]> buf_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t parse_pos_ = 0;
  std::size_t end_ = 0;
  std::size_t head_start_ = 0;   // where the message in progress (or the next one) starts
  std::size_t body_anchor_ = 0;  // end of the head's last recorded span: framing follows

  // The message in progress, or the one handed out.
  Span url_;
  Span reason_;
  Span body_;
  std::vector<FieldSpan> headers_;
  std::vector<FieldSpan> trailers_;
  std::size_t trailer_bytes_ = 0;
  bool in_message_ = false;
  bool headers_complete_ = false;
  bool message_complete_ = false;
  bool in_field_ = false;
  bool in_value_ = false;
  bool keep_alive_ = false;
  bool chunked_ = false;
  bool expect_continue_ = false;
  bool delivered_ = false;
  bool closed_ = false;  // a message without keep-alive was handed out: nothing may follow
  bool response_to_head_ = false;

  std::optional<Error> error_;
  int error_status_ = 0;
};

}  // namespace junction::http::detail
