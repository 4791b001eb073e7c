// response_writer.cc — status line, header fields, Content-Length and chunked framing.
#include "junction/http/response_writer.h"

#include <cassert>

#include "junction/http/http_date.h"
#include "junction/http/status_codes.h"
#include "junction/http/wire.h"

namespace junction::http {

ResponseContext ContextFor(const Request& request) {
  return ResponseContext{.head = request.is_head(),
                         .keep_alive = request.keep_alive,
                         .http10 = request.version_major == 1 && request.version_minor == 0};
}

void ResponseWriter::AppendContinue(std::string& out) {
  out.append("HTTP/1.1 100 Continue\r\n\r\n");
}

ResponseWriter::ResponseWriter(std::string& out, const ResponseContext& context)
    : out_(out), context_(context), close_(!context.keep_alive) {}

void ResponseWriter::Start(int status) {
  assert(state_ == State::kIdle && "ResponseWriter::Start called twice");
  assert(status >= 100 && status <= 599);
  status_ = status;
  body_allowed_ = !context_.head && !StatusHasNoBody(status);
  out_.append("HTTP/1.1 ");
  detail::AppendDecimal(out_, static_cast<std::uint64_t>(status));
  out_.push_back(' ');
  out_.append(ReasonPhrase(status));
  out_.append("\r\n");
  state_ = State::kHeaders;
}

Status<void> ResponseWriter::AddHeader(std::string_view name, std::string_view value) {
  assert(state_ == State::kHeaders && "AddHeader after the head ended or before Start");
  if (auto ok = detail::CheckNotFraming(name, "ResponseWriter"); !ok) return ok;
  if (auto ok = detail::CheckField(name, value); !ok) return ok;
  detail::AppendField(out_, name, value);
  return {};
}

void ResponseWriter::AddHeaderLines(std::string_view lines) {
  assert(state_ == State::kHeaders && "AddHeaderLines after the head ended or before Start");
  assert(ForEachHeaderLine(lines, [](std::string_view name, std::string_view) {
           assert(detail::CheckNotFraming(name, "ResponseWriter").has_value() && "a framing header line");
         }) && "malformed header lines");
  out_.append(lines);
}

void ResponseWriter::AddDate(std::time_t now) {
  assert(state_ == State::kHeaders);
  detail::AppendField(out_, "Date", CachedHttpDate(now));
}

void ResponseWriter::EndHead() {
  if (close_) {
    out_.append("Connection: close\r\n");
  } else if (context_.http10) {
    out_.append("Connection: keep-alive\r\n");
  }
  out_.append("\r\n");
}

void ResponseWriter::EndHeaders(std::uint64_t content_length) {
  assert(state_ == State::kHeaders && "EndHeaders before Start or after the head ended");
  // RFC 9110 8.6: no Content-Length in 1xx or 204; 304 may omit it, and does here.
  if (!StatusHasNoBody(status_)) {
    out_.append("Content-Length: ");
    detail::AppendDecimal(out_, content_length);
    out_.append("\r\n");
  }
  EndHead();
  state_ = State::kBody;
}

void ResponseWriter::Finish(std::string_view body) {
  EndHeaders(body.size());
  if (body_allowed_) out_.append(body);
  state_ = State::kDone;
}

void ResponseWriter::BeginChunked() {
  assert(state_ == State::kHeaders && "BeginChunked before Start or after the head ended");
  if (StatusHasNoBody(status_)) {
    EndHead();
  } else if (context_.http10) {
    // HTTP/1.0 has no chunked coding (RFC 9112 6.1): the body ends when the connection does.
    close_ = true;
    EndHead();
  } else {
    out_.append("Transfer-Encoding: chunked\r\n");
    chunked_ = true;
    EndHead();
  }
  state_ = State::kChunked;
}

void ResponseWriter::WriteChunk(std::string_view data) {
  assert(state_ == State::kChunked && "WriteChunk outside BeginChunked/EndChunked");
  if (!body_allowed_) return;
  if (chunked_) {
    detail::AppendChunk(out_, data);
  } else {
    out_.append(data);
  }
}

Status<void> ResponseWriter::EndChunked(std::span<const Header> trailers) {
  assert(state_ == State::kChunked && "EndChunked without BeginChunked");
  for (const Header& t : trailers) {
    if (auto ok = detail::CheckField(t.name, t.value); !ok) return ok;
  }
  if (chunked_ && body_allowed_) detail::AppendLastChunk(out_, trailers);
  state_ = State::kDone;
  return {};
}

}  // namespace junction::http
