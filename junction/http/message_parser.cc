// message_parser.cc — buffer management and llhttp callbacks shared by both parsers.
#include "junction/http/message_parser.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "junction/http/headers.h"
#include "junction/http/status_codes.h"

namespace junction::http::detail {
namespace {

// A chunked body's framing is reclaimed once this many consumed bytes sit between its end
// and the unparsed input: small enough to bound memory, large enough to batch the memmove.
constexpr std::size_t kBodyGapReclaimBytes = 1024;

MessageParser& Self(llhttp_t* p) {
  return *static_cast<MessageParser*>(p->data);
}

}  // namespace

const llhttp_settings_t& MessageParser::Settings() {
  // A function-local static: ready even for parsers built during static initialization.
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = &MessageParser::OnMessageBegin;
    s.on_url = &MessageParser::OnUrl;
    s.on_status = &MessageParser::OnStatus;
    s.on_header_field = &MessageParser::OnHeaderField;
    s.on_header_field_complete = &MessageParser::OnHeaderFieldComplete;
    s.on_header_value = &MessageParser::OnHeaderValue;
    s.on_header_value_complete = &MessageParser::OnHeaderValueComplete;
    s.on_headers_complete = &MessageParser::OnHeadersComplete;
    s.on_body = &MessageParser::OnBody;
    s.on_message_complete = &MessageParser::OnMessageComplete;
    return s;
  }();
  return settings;
}

MessageParser::MessageParser(Type type, const ParserOptions& options)
    : type_(type), options_(options) {
  llhttp_init(&parser_, type == Type::kRequest ? HTTP_REQUEST : HTTP_RESPONSE, &Settings());
  parser_.data = this;
  headers_.reserve(std::min<std::size_t>(options_.max_header_count, 32));
}

// ---- buffer -------------------------------------------------------------------------------

void MessageParser::Release() {
  if (!delivered_) return;
  delivered_ = false;
  begin_ = parse_pos_;
  head_start_ = parse_pos_;
  if (begin_ == end_) begin_ = parse_pos_ = end_ = head_start_ = 0;
}

void MessageParser::Reserve(std::size_t n) {
  Release();
  if (capacity_ - end_ >= n) return;
  // Compact: everything before begin_ is free. Offsets of the message in progress move too.
  if (begin_ > 0) {
    std::size_t shift = begin_;
    std::memmove(buf_.get(), buf_.get() + shift, end_ - shift);
    auto move = [shift](Span& s) { s.off = s.off >= shift ? s.off - shift : 0; };
    move(url_);
    move(reason_);
    move(body_);
    for (FieldSpan& f : headers_) move(f.name), move(f.value);
    for (FieldSpan& f : trailers_) move(f.name), move(f.value);
    begin_ = 0;
    parse_pos_ -= shift;
    end_ -= shift;
    head_start_ = head_start_ >= shift ? head_start_ - shift : 0;
    body_anchor_ = body_anchor_ >= shift ? body_anchor_ - shift : 0;
    if (capacity_ - end_ >= n) return;
  }
  std::size_t new_capacity = std::max<std::size_t>(capacity_, options_.initial_buffer_bytes);
  if (new_capacity == 0) new_capacity = 4096;
  while (new_capacity - end_ < n) new_capacity *= 2;
  auto grown = std::make_unique_for_overwrite<char[]>(new_capacity);
  if (end_ > 0) std::memcpy(grown.get(), buf_.get(), end_);
  buf_ = std::move(grown);
  capacity_ = new_capacity;
}

std::span<char> MessageParser::WritableSpace(std::size_t min_bytes) {
  std::size_t want = std::max<std::size_t>(min_bytes, 1);
  // A Content-Length body whose head is parsed (its size already checked against the limit):
  // room for all of it now, so the buffer grows once and the body is never moved again.
  // llhttp counts parser_.content_length down as the body is parsed.
  if (in_body() && !chunked_ && !failed()) {
    std::size_t unparsed = end_ - parse_pos_;
    if (parser_.content_length > unparsed) {
      want = std::max<std::size_t>(want, parser_.content_length - unparsed);
    }
  }
  Reserve(want);
  return {buf_.get() + end_, capacity_ - end_};
}

void MessageParser::Commit(std::size_t n) {
  end_ += std::min(n, capacity_ - end_);
}

void MessageParser::Append(std::string_view bytes) {
  if (bytes.empty()) return;
  Reserve(bytes.size());
  std::memcpy(buf_.get() + end_, bytes.data(), bytes.size());
  end_ += bytes.size();
}

void MessageParser::ReclaimBodyGap() {
  // Only between llhttp calls, inside a chunked body, before any trailer span exists: then no
  // recorded offset lies at or beyond parse_pos_, and llhttp holds no pointer into the buffer.
  if (!chunked_ || !in_body() || !trailers_.empty() || in_field_ || in_value_) return;
  // Before the first body byte, everything after the head's last span is framing too (the
  // blank line, chunk-size lines, extensions), so a huge extension cannot pin memory.
  std::size_t body_end = body_.len ? body_.off + body_.len : body_anchor_;
  std::size_t gap = parse_pos_ - body_end;
  if (gap < kBodyGapReclaimBytes) return;
  std::memmove(buf_.get() + body_end, buf_.get() + parse_pos_, end_ - parse_pos_);
  end_ -= gap;
  parse_pos_ = body_end;
}

// ---- parsing ------------------------------------------------------------------------------

MessageParser::Step MessageParser::Fail(int http_status, ErrorCode code, std::string message) {
  if (!error_) {
    error_status_ = http_status;
    error_.emplace(code, std::move(message));
  }
  return Step::kError;
}

MessageParser::Step MessageParser::FailFromLlhttp(llhttp_errno_t err) {
  std::string m =
      type_ == Type::kRequest ? "malformed HTTP request: " : "malformed HTTP response: ";
  m += llhttp_get_error_reason(&parser_) ? llhttp_get_error_reason(&parser_) : "parse error";
  m += " (llhttp ";
  m += llhttp_errno_name(err);
  m += ")";
  m += type_ == Type::kRequest
           ? "; the client must send valid HTTP/1.1 (RFC 9112); this connection will be closed"
           : "; the server did not speak valid HTTP/1.1 (RFC 9112); close this connection";
  return Fail(kStatusBadRequest, ErrorCode::kInvalidArgument, std::move(m));
}

MessageParser::Step MessageParser::Parse() {
  if (error_) return Step::kError;
  Release();
  if (closed_) {
    // RFC 9112 9.6: nothing after a message that closes the connection is processed.
    begin_ = parse_pos_ = end_ = head_start_ = 0;
    return Step::kNeedMore;
  }
  while (parse_pos_ < end_) {
    std::size_t n = end_ - parse_pos_;
    bool windowed = false;
    if (!in_message_ || !headers_complete_) {
      // The head must end within max_header_bytes of the message's start (RFC 9110 15.5.32).
      if (!in_message_) head_start_ = parse_pos_;
      std::size_t used = parse_pos_ - head_start_;
      std::size_t budget = options_.max_header_bytes > used ? options_.max_header_bytes - used : 0;
      if (n > budget) n = budget, windowed = true;
    }
    llhttp_errno_t err = n > 0 ? llhttp_execute(&parser_, buf_.get() + parse_pos_, n) : HPE_OK;
    if (error_) return Step::kError;
    if (err == HPE_OK) {
      parse_pos_ += n;
      if (windowed && !(in_message_ && headers_complete_)) {
        return Fail(kStatusRequestHeaderFieldsTooLarge, ErrorCode::kResourceExhausted,
                    std::string(type_ == Type::kRequest ? "the request" : "the status") +
                        " line and header fields exceed " +
                        std::to_string(options_.max_header_bytes) +
                        " bytes; send fewer or shorter headers (or raise max_header_bytes)");
      }
      // Trailers are measured field by field (OnHeaderValueComplete); this only stops a field
      // that never ends from growing the buffer without bound.
      if (in_body() && !trailers_.empty() &&
          parse_pos_ - trailers_.front().name.off > 2 * options_.max_header_bytes) {
        return Fail(kStatusRequestHeaderFieldsTooLarge, ErrorCode::kResourceExhausted,
                    "the chunked body's trailer fields exceed " +
                        std::to_string(options_.max_header_bytes) +
                        " bytes; send fewer or shorter trailers (or raise max_header_bytes)");
      }
      ReclaimBodyGap();
      continue;
    }
    if (err == HPE_PAUSED && message_complete_) {
      parse_pos_ = Offset(llhttp_get_error_pos(&parser_));
      llhttp_resume(&parser_);
      delivered_ = true;
      closed_ = !keep_alive_;
      return Step::kMessage;
    }
    if (err == HPE_PAUSED_UPGRADE) {
      return Fail(type_ == Type::kRequest ? kStatusNotImplemented : kStatusBadGateway,
                  ErrorCode::kInvalidArgument,
                  "the peer switched this connection to another protocol, which junction/http "
                  "does not speak; close the connection");
    }
    return FailFromLlhttp(err);
  }
  return Step::kNeedMore;
}

MessageParser::Step MessageParser::FinishAtEof() {
  if (error_) return Step::kError;
  Release();
  if (closed_) return Step::kNeedMore;
  if (parse_pos_ < end_) {
    Step s = Parse();
    if (s != Step::kNeedMore) return s;
  }
  if (!in_message_) return Step::kNeedMore;
  llhttp_errno_t err = llhttp_finish(&parser_);
  if (error_) return Step::kError;
  if (message_complete_ && (err == HPE_OK || err == HPE_PAUSED)) {
    // llhttp_finish() reports on_message_complete's pause without entering the paused state.
    keep_alive_ = false;
    delivered_ = true;
    return Step::kMessage;
  }
  return Fail(kStatusBadRequest, ErrorCode::kClosed,
              std::string("the peer closed the connection in the middle of a message (llhttp ") +
                  llhttp_errno_name(err) + "); the message is incomplete, discard it");
}

// ---- llhttp callbacks ---------------------------------------------------------------------

void MessageParser::Extend(Span& span, const char* at, std::size_t len) {
  if (span.len == 0) span.off = Offset(at);
  span.len += len;  // pieces of one span are adjacent: the buffer is parsed in order
}

int MessageParser::OnMessageBegin(llhttp_t* p) {
  MessageParser& m = Self(p);
  m.in_message_ = true;
  m.headers_complete_ = m.message_complete_ = false;
  m.in_field_ = m.in_value_ = false;
  m.keep_alive_ = m.chunked_ = m.expect_continue_ = false;
  m.url_ = m.reason_ = m.body_ = Span{};
  m.headers_.clear();
  m.trailers_.clear();
  m.trailer_bytes_ = 0;
  return 0;
}

int MessageParser::OnUrl(llhttp_t* p, const char* at, std::size_t len) {
  Self(p).Extend(Self(p).url_, at, len);
  return 0;
}

int MessageParser::OnStatus(llhttp_t* p, const char* at, std::size_t len) {
  Self(p).Extend(Self(p).reason_, at, len);
  return 0;
}

int MessageParser::OnHeaderField(llhttp_t* p, const char* at, std::size_t len) {
  MessageParser& m = Self(p);
  std::vector<FieldSpan>& list = m.headers_complete_ ? m.trailers_ : m.headers_;
  if (!m.in_field_) {
    m.in_field_ = true;
    list.push_back(FieldSpan{{m.Offset(at), 0}, {m.Offset(at), 0}});
  }
  list.back().name.len += len;
  return 0;
}

int MessageParser::OnHeaderFieldComplete(llhttp_t* p) {
  MessageParser& m = Self(p);
  m.in_field_ = false;
  std::vector<FieldSpan>& list = m.headers_complete_ ? m.trailers_ : m.headers_;
  if (list.size() > m.options_.max_header_count) {
    // Counted once the name is complete, so that a malformed name is reported as such (400)
    // however the input was cut.
    m.Fail(kStatusRequestHeaderFieldsTooLarge, ErrorCode::kResourceExhausted,
           std::string(m.headers_complete_ ? "the trailer" : "the header") + " has more than " +
               std::to_string(m.options_.max_header_count) +
               " fields; send fewer (or raise max_header_count)");
    return -1;
  }
  if (!list.empty()) {
    // RFC 9112 section 5.1: a name is a token, since two parsers might disagree on where a
    // name with other bytes ends. llhttp built strict (CMakeLists.txt) refuses every non-token
    // byte in a name (request_parser_test has each kind) but lets an empty name through.
    if (list.back().name.len == 0) {
      m.Fail(kStatusBadRequest, ErrorCode::kInvalidArgument,
             "a header line starts with ':' (an empty name; RFC 9110 5.6.2 wants a token); fix "
             "the client; this connection will be closed");
      return -1;
    }
    // An empty value gets no on_header_value call: point it just past the name.
    list.back().value = Span{list.back().name.off + list.back().name.len, 0};
  }
  return 0;
}

int MessageParser::OnHeaderValue(llhttp_t* p, const char* at, std::size_t len) {
  MessageParser& m = Self(p);
  std::vector<FieldSpan>& list = m.headers_complete_ ? m.trailers_ : m.headers_;
  if (list.empty()) return 0;
  if (!m.in_value_) {
    m.in_value_ = true;
    list.back().value = Span{m.Offset(at), 0};
  }
  list.back().value.len += len;
  return 0;
}

int MessageParser::OnHeaderValueComplete(llhttp_t* p) {
  MessageParser& m = Self(p);
  m.in_value_ = false;
  std::vector<FieldSpan>& list = m.headers_complete_ ? m.trailers_ : m.headers_;
  if (list.empty()) return 0;
  // Drop trailing whitespace (RFC 9112 section 5: OWS around the value is not part of it).
  Span& v = list.back().value;
  while (v.len > 0 && (m.buf_[v.off + v.len - 1] == ' ' || m.buf_[v.off + v.len - 1] == '\t')) {
    --v.len;
  }
  // llhttp's loose mode accepts obsolete line folding and leaves the CRLF inside the value;
  // RFC 9112 5.2 lets a server refuse it, and a CR or LF must never reach a handler.
  // Not find_first_of: libstdc++'s find_first_of calls memchr once per byte of the value (26
  // calls for a usual request's head).
  if (ContainsCrLfOrNul(m.View(v), /*nul_too=*/false)) {
    m.Fail(kStatusBadRequest, ErrorCode::kInvalidArgument,
           "header \"" + std::string(m.View(list.back().name).substr(0, 64)) +
               "\" is folded over several lines (obsolete, RFC 9112 5.2); send each field on "
               "one line; this connection will be closed");
    return -1;
  }
  if (m.headers_complete_) {
    m.trailer_bytes_ += list.back().name.len + v.len + 4;
    if (m.trailer_bytes_ > m.options_.max_header_bytes) {
      m.Fail(kStatusRequestHeaderFieldsTooLarge, ErrorCode::kResourceExhausted,
             "the chunked body's trailer fields exceed " +
                 std::to_string(m.options_.max_header_bytes) +
                 " bytes; send fewer or shorter trailers (or raise max_header_bytes)");
      return -1;
    }
  }
  return 0;
}

// Checks a complete head; 0 to go on, -1 with error_ set to refuse the message.
int MessageParser::CheckHead() {
  const llhttp_t& p = parser_;
  if (type_ == Type::kRequest) {
    if (p.http_major != 1) {
      Fail(kStatusHttpVersionNotSupported, ErrorCode::kInvalidArgument,
           "HTTP/" + std::to_string(p.http_major) + "." + std::to_string(p.http_minor) +
               " is not supported on this port; send HTTP/1.1 or HTTP/1.0");
      return -1;
    }
    if (p.method == HTTP_CONNECT) {
      Fail(kStatusNotImplemented, ErrorCode::kInvalidArgument,
           "CONNECT (tunnelling) is not supported; send an ordinary request");
      return -1;
    }
    if (p.http_minor == 0 && (p.flags & F_TRANSFER_ENCODING)) {
      // RFC 9112 section 6.1: Transfer-Encoding in HTTP/1.0 means the framing is faulty.
      Fail(kStatusBadRequest, ErrorCode::kInvalidArgument,
           "an HTTP/1.0 request may not use Transfer-Encoding; send Content-Length or use "
           "HTTP/1.1");
      return -1;
    }
    if (p.flags & F_TRANSFER_ENCODING) {
      // llhttp checks that chunked is the final coding; junction decodes no other coding, so
      // anything besides chunked is refused (RFC 9112 6.1: 501 for a coding not understood).
      for (const FieldSpan& f : headers_) {
        if (!EqualsIgnoreCase(View(f.name), "transfer-encoding")) continue;
        std::string_view rest = View(f.value);
        while (!rest.empty()) {
          std::size_t comma = rest.find(',');
          std::string_view coding = TrimOws(rest.substr(0, comma));
          if (!coding.empty() && !EqualsIgnoreCase(coding, "chunked")) {
            Fail(kStatusNotImplemented, ErrorCode::kInvalidArgument,
                 "transfer coding \"" + std::string(coding.substr(0, 32)) +
                     "\" is not supported; send the body with Content-Length or plain "
                     "Transfer-Encoding: chunked");
            return -1;
          }
          if (comma == std::string_view::npos) break;
          rest.remove_prefix(comma + 1);
        }
      }
    }
    if (options_.require_host && p.http_minor >= 1) {
      std::size_t hosts = 0;
      for (const FieldSpan& f : headers_) hosts += EqualsIgnoreCase(View(f.name), "host");
      if (hosts != 1) {
        Fail(kStatusBadRequest, ErrorCode::kInvalidArgument,
             hosts == 0 ? "the HTTP/1.1 request has no Host header; add one (RFC 9112 3.2)"
                        : "the request has more than one Host header; send exactly one");
        return -1;
      }
    }
  }
  if ((p.flags & F_CONTENT_LENGTH) && !(p.flags & F_CHUNKED) &&
      p.content_length > options_.max_body_bytes) {
    Fail(kStatusContentTooLarge, ErrorCode::kResourceExhausted,
         "the body (Content-Length " + std::to_string(p.content_length) + ") exceeds " +
             std::to_string(options_.max_body_bytes) +
             " bytes; send a smaller body (or raise max_body_bytes)");
    return -1;
  }
  return 0;
}

int MessageParser::OnHeadersComplete(llhttp_t* p) {
  MessageParser& m = Self(p);
  m.in_field_ = m.in_value_ = false;
  if (m.CheckHead() != 0) return -1;
  m.headers_complete_ = true;
  m.chunked_ = (p->flags & F_CHUNKED) != 0;
  m.body_anchor_ = m.url_.off + m.url_.len;
  m.body_anchor_ = std::max(m.body_anchor_, m.reason_.off + m.reason_.len);
  if (!m.headers_.empty()) {
    const FieldSpan& last = m.headers_.back();
    m.body_anchor_ =
        std::max({m.body_anchor_, last.name.off + last.name.len, last.value.off + last.value.len});
  }
  if (m.type_ == Type::kRequest) {
    // Upgrade requests are answered as ordinary HTTP (RFC 9110 7.8 lets a server ignore them).
    p->upgrade = 0;
    if (p->http_minor >= 1) {
      for (const FieldSpan& f : m.headers_) {
        if (!EqualsIgnoreCase(m.View(f.name), "expect")) continue;
        m.expect_continue_ = EqualsIgnoreCase(m.View(f.value), "100-continue");
      }
    }
    return 0;
  }
  // A response to HEAD has no body, whatever its framing headers say (RFC 9110 9.3.2); a 1xx
  // response is interim and does not answer the request.
  bool interim = p->status_code >= 100 && p->status_code < 200;
  return (!interim && m.response_to_head_) ? 1 : 0;
}

int MessageParser::OnBody(llhttp_t* p, const char* at, std::size_t len) {
  MessageParser& m = Self(p);
  if (m.body_.len + len > m.options_.max_body_bytes) {
    m.Fail(kStatusContentTooLarge, ErrorCode::kResourceExhausted,
           "the chunked body exceeds " + std::to_string(m.options_.max_body_bytes) +
               " bytes; send a smaller body (or raise max_body_bytes)");
    return -1;
  }
  std::size_t off = m.Offset(at);
  if (m.body_.len == 0) {
    m.body_.off = off;
  } else if (off != m.body_.off + m.body_.len) {
    // A later chunk: move it down onto the end of the body so the body stays contiguous.
    // The bytes in between are chunk framing llhttp has already consumed.
    std::memmove(m.buf_.get() + m.body_.off + m.body_.len, at, len);
  }
  m.body_.len += len;
  return 0;
}

int MessageParser::OnMessageComplete(llhttp_t* p) {
  MessageParser& m = Self(p);
  m.message_complete_ = true;
  m.in_message_ = false;
  m.keep_alive_ = llhttp_should_keep_alive(p) != 0;
  return HPE_PAUSED;
}

}  // namespace junction::http::detail
