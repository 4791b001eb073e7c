// request_writer.cc — request line, header fields, Content-Length and chunked framing.
#include "junction/http/request_writer.h"

#include <cassert>

#include "junction/http/wire.h"

namespace junction::http {
namespace {

// Methods whose requests carry no content unless they say so (RFC 9110 section 9.3).
bool ContentIsUnusual(Method m) {
  return m == Method::kGet || m == Method::kHead || m == Method::kDelete || m == Method::kOptions ||
         m == Method::kTrace || m == Method::kConnect;
}

}  // namespace

Status<void> RequestWriter::Start(Method method, std::string_view target) {
  assert(state_ == State::kIdle && "RequestWriter::Start called twice");
  if (method == Method::kOther) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "RequestWriter cannot write Method::kOther; use a method junction names");
  }
  if (target.empty() || target.find_first_of(std::string_view(" \r\n\0", 4)) != target.npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "request target \"" + std::string(target.substr(0, 64)) +
                         "\" is empty or holds a space, CR, LF or NUL; percent-encode those "
                         "bytes (RFC 3986)");
  }
  method_ = method;
  out_.append(MethodName(method));
  out_.push_back(' ');
  out_.append(target);
  out_.append(" HTTP/1.1\r\n");
  state_ = State::kHeaders;
  return {};
}

Status<void> RequestWriter::AddHeader(std::string_view name, std::string_view value) {
  assert(state_ == State::kHeaders && "AddHeader after the head ended or before Start");
  if (auto ok = detail::CheckNotFraming(name, "RequestWriter"); !ok) return ok;
  if (auto ok = detail::CheckField(name, value); !ok) return ok;
  detail::AppendField(out_, name, value);
  return {};
}

void RequestWriter::EndHead() {
  if (close_) out_.append("Connection: close\r\n");
  out_.append("\r\n");
}

void RequestWriter::EndHeaders(std::uint64_t content_length) {
  assert(state_ == State::kHeaders && "EndHeaders before Start or after the head ended");
  if (content_length > 0 || !ContentIsUnusual(method_)) {
    out_.append("Content-Length: ");
    detail::AppendDecimal(out_, content_length);
    out_.append("\r\n");
  }
  EndHead();
  state_ = State::kBody;
}

void RequestWriter::Finish(std::string_view body) {
  EndHeaders(body.size());
  out_.append(body);
  state_ = State::kDone;
}

void RequestWriter::BeginChunked() {
  assert(state_ == State::kHeaders && "BeginChunked before Start or after the head ended");
  out_.append("Transfer-Encoding: chunked\r\n");
  EndHead();
  state_ = State::kChunked;
}

void RequestWriter::WriteChunk(std::string_view data) {
  assert(state_ == State::kChunked && "WriteChunk outside BeginChunked/EndChunked");
  detail::AppendChunk(out_, data);
}

Status<void> RequestWriter::EndChunked(std::span<const Header> trailers) {
  assert(state_ == State::kChunked && "EndChunked without BeginChunked");
  for (const Header& t : trailers) {
    if (auto ok = detail::CheckField(t.name, t.value); !ok) return ok;
  }
  detail::AppendLastChunk(out_, trailers);
  state_ = State::kDone;
  return {};
}

}  // namespace junction::http
