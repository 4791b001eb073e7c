// response_parser.cc — ResponseParser: request/response pairing and Response assembly.
#include "junction/http/response_parser.h"

#include "junction/http/message_parser.h"

namespace junction::http {

ParserOptions ResponseParser::DefaultOptions() {
  ParserOptions o;
  o.max_body_bytes = 64 * 1024 * 1024;
  o.require_host = false;
  return o;
}

ResponseParser::ResponseParser(const ParserOptions& options)
    : core_(std::make_unique<detail::MessageParser>(detail::MessageParser::Type::kResponse,
                                                    options)) {
  response_.headers.Reserve(16);
}

ResponseParser::~ResponseParser() = default;
ResponseParser::ResponseParser(ResponseParser&&) noexcept = default;
ResponseParser& ResponseParser::operator=(ResponseParser&&) noexcept = default;

void ResponseParser::ExpectResponseTo(Method method) {
  pending_.push_back(method);
}

void ResponseParser::Feed(std::string_view bytes) {
  core_->Append(bytes);
}

std::span<char> ResponseParser::WritableSpace(std::size_t min_bytes) {
  return core_->WritableSpace(min_bytes);
}

void ResponseParser::Commit(std::size_t n) {
  core_->Commit(n);
}

Status<const Response*> ResponseParser::Deliver() {
  const detail::MessageParser& c = *core_;
  const llhttp_t& p = c.llhttp();
  response_.status = p.status_code;
  response_.reason = c.View(c.reason());
  response_.version_major = p.http_major;
  response_.version_minor = p.http_minor;
  response_.headers.Clear();
  for (const detail::FieldSpan& f : c.headers()) {
    response_.headers.Add(c.View(f.name), c.View(f.value));
  }
  response_.trailers.Clear();
  for (const detail::FieldSpan& f : c.trailers()) {
    response_.trailers.Add(c.View(f.name), c.View(f.value));
  }
  response_.body = c.View(c.body());
  response_.keep_alive = c.keep_alive();
  response_.chunked = c.chunked();
  // A final response answers the oldest request still waiting.
  if (!response_.is_interim() && !pending_.empty()) pending_.pop_front();
  return &response_;
}

Status<const Response*> ResponseParser::Advance(bool at_eof) {
  core_->set_response_to_head(!pending_.empty() && pending_.front() == Method::kHead);
  switch (at_eof ? core_->FinishAtEof() : core_->Parse()) {
    case detail::MessageParser::Step::kNeedMore:
      return nullptr;
    case detail::MessageParser::Step::kMessage:
      return Deliver();
    case detail::MessageParser::Step::kError:
      break;
  }
  return std::unexpected(core_->error());
}

Status<const Response*> ResponseParser::Next() { return Advance(/*at_eof=*/false); }

Status<const Response*> ResponseParser::FinishAtEof() { return Advance(/*at_eof=*/true); }

std::size_t ResponseParser::buffered_bytes() const {
  return core_->buffered_bytes();
}

}  // namespace junction::http
