// request_parser.cc — RequestParser: turns the shared core's spans into a Request.
#include "junction/http/request_parser.h"

#include "junction/http/message_parser.h"
#include "junction/http/target.h"

namespace junction::http {
namespace {

Method MethodFromLlhttp(std::uint8_t m) {
  switch (m) {
    case HTTP_GET:
      return Method::kGet;
    case HTTP_HEAD:
      return Method::kHead;
    case HTTP_POST:
      return Method::kPost;
    case HTTP_PUT:
      return Method::kPut;
    case HTTP_DELETE:
      return Method::kDelete;
    case HTTP_PATCH:
      return Method::kPatch;
    case HTTP_OPTIONS:
      return Method::kOptions;
    case HTTP_TRACE:
      return Method::kTrace;
    case HTTP_CONNECT:
      return Method::kConnect;
    default:
      return Method::kOther;
  }
}

}  // namespace

RequestParser::RequestParser(const ParserOptions& options)
    : core_(
          std::make_unique<detail::MessageParser>(detail::MessageParser::Type::kRequest, options)) {
  request_.headers.Reserve(16);
}

RequestParser::~RequestParser() = default;
RequestParser::RequestParser(RequestParser&&) noexcept = default;
RequestParser& RequestParser::operator=(RequestParser&&) noexcept = default;

void RequestParser::Feed(std::string_view bytes) {
  core_->Append(bytes);
}

std::span<char> RequestParser::WritableSpace(std::size_t min_bytes) {
  return core_->WritableSpace(min_bytes);
}

void RequestParser::Commit(std::size_t n) {
  core_->Commit(n);
}

void RequestParser::Fill() {
  const detail::MessageParser& c = *core_;
  const llhttp_t& p = c.llhttp();
  request_.method = MethodFromLlhttp(p.method);
  request_.method_name = llhttp_method_name(static_cast<llhttp_method_t>(p.method));
  request_.target = c.View(c.url());
  Target t = SplitTarget(request_.target);
  request_.path = t.path;
  request_.query = t.query;
  request_.version_major = p.http_major;
  request_.version_minor = p.http_minor;
  request_.headers.Clear();
  for (const detail::FieldSpan& f : c.headers()) {
    request_.headers.Add(c.View(f.name), c.View(f.value));
  }
  request_.trailers.Clear();
  for (const detail::FieldSpan& f : c.trailers()) {
    request_.trailers.Add(c.View(f.name), c.View(f.value));
  }
  request_.body = c.View(c.body());
  request_.keep_alive = c.keep_alive();
  request_.expect_continue = c.expect_continue();
  request_.chunked = c.chunked();
}

Status<const Request*> RequestParser::Next() {
  switch (core_->Parse()) {
    case detail::MessageParser::Step::kNeedMore:
      return nullptr;
    case detail::MessageParser::Step::kMessage:
      Fill();
      continue_sent_ = false;
      return &request_;
    case detail::MessageParser::Step::kError:
      break;
  }
  return std::unexpected(core_->error());
}

Status<const Request*> RequestParser::FinishAtEof() {
  switch (core_->FinishAtEof()) {
    case detail::MessageParser::Step::kNeedMore:
      return nullptr;
    case detail::MessageParser::Step::kMessage:
      Fill();
      return &request_;
    case detail::MessageParser::Step::kError:
      break;
  }
  return std::unexpected(core_->error());
}

bool RequestParser::WantsContinue() const {
  return !core_->failed() && core_->in_body() && core_->expect_continue() && !continue_sent_;
}

void RequestParser::ContinueSent() {
  continue_sent_ = true;
}

int RequestParser::error_status() const {
  return core_->error_status();
}

std::size_t RequestParser::buffered_bytes() const {
  return core_->buffered_bytes();
}

}  // namespace junction::http
