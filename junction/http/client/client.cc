// client.cc — one call: URL, connection (idle or new), request bytes, response parsing.
#include "junction/http/client/client.h"

#include <fmt/format.h>

#include <mutex>

#include "junction/http/client/url.h"
#include "junction/http/request_writer.h"
#include "junction/http/response_parser.h"

namespace junction::http {

using sched::Clock;

std::optional<std::string_view> ClientResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

// How one exchange on one connection ended.
struct Client::Attempt {
  Status<ClientResponse> result = MakeError(ErrorCode::kInternal, "not run");
  bool keep_alive = false;     // the connection may carry the next call
  bool got_bytes = false;      // some response byte arrived (then nothing is retried)
};

Client::Client(net::Stack* stack, ClientOptions options) : stack_(stack), options_(std::move(options)) {}

Client::~Client() { CloseIdle(); }

std::size_t Client::idle_connections() const {
  std::lock_guard<sched::Spinlock> lock(idle_mu_);
  std::size_t n = 0;
  for (const auto& [ep, conns] : idle_) n += conns.size();
  return n;
}

void Client::CloseIdle() {
  std::map<net::Endpoint, std::vector<net::TcpConn>> gone;
  {
    std::lock_guard<sched::Spinlock> lock(idle_mu_);
    gone.swap(idle_);
  }
  // Closed here, outside the lock, as `gone` goes.
}

net::TcpConn Client::TakeIdle(const net::Endpoint& ep) {
  std::lock_guard<sched::Spinlock> lock(idle_mu_);
  auto it = idle_.find(ep);
  if (it == idle_.end() || it->second.empty()) return {};
  net::TcpConn c = std::move(it->second.back());
  it->second.pop_back();
  return c;
}

void Client::PutIdle(const net::Endpoint& ep, net::TcpConn conn) {
  {
    std::lock_guard<sched::Spinlock> lock(idle_mu_);
    auto& list = idle_[ep];
    if (list.size() < options_.max_idle_per_endpoint) {
      list.push_back(std::move(conn));
      return;
    }
  }
  conn.Close();  // the list is full: this one goes
}

namespace {

// A parser's error: the server's fault, not the caller's (kIo), but a limit stays a limit.
std::unexpected<Error> ResponseError(const Error& e) {
  if (e.code() == ErrorCode::kInvalidArgument) return MakeError(ErrorCode::kIo, "malformed response: " + e.message());
  return std::unexpected(e);
}

// Writes `bytes` and reads one final response on `conn`.
void Exchange(net::TcpConn& conn, std::string_view bytes, Method method, sched::Deadline deadline,
              const ClientOptions& options, Status<ClientResponse>& result, bool& keep_alive, bool& got_bytes) {
  if (auto w = conn.Write(std::as_bytes(std::span(bytes.data(), bytes.size())), deadline); !w) {
    result = std::unexpected(w.error());
    return;
  }
  ParserOptions po = ResponseParser::DefaultOptions();
  po.max_body_bytes = options.max_response_body_bytes;
  po.max_header_bytes = options.max_header_bytes;
  po.max_header_count = options.max_header_count;
  ResponseParser parser(po);
  parser.ExpectResponseTo(method);
  auto take = [&](const Response& r) {
    ClientResponse out;
    out.status = r.status;
    out.reason = std::string(r.reason);
    out.headers.reserve(r.headers.size());
    for (const auto& h : r.headers) out.headers.emplace_back(std::string(h.name), std::string(h.value));
    out.body = std::string(r.body);
    keep_alive = r.keep_alive;
    result = std::move(out);
  };
  while (true) {
    auto r = parser.Next();
    if (!r) {
      result = ResponseError(r.error());
      return;
    }
    if (*r != nullptr) {
      if ((*r)->is_interim()) continue;
      take(**r);
      return;
    }
    std::span<char> space = parser.WritableSpace(16 * 1024);
    auto n = conn.Read(std::as_writable_bytes(space), deadline);
    if (!n) {
      result = std::unexpected(n.error());
      return;
    }
    if (*n == 0) {
      parser.Commit(0);
      while (true) {
        auto last = parser.FinishAtEof();
        if (!last) {
          result = ResponseError(last.error());
          return;
        }
        if (*last == nullptr) {
          result = MakeError(ErrorCode::kClosed, got_bytes ? "the server closed the connection mid-response"
                                                           : "the server closed the connection without a response");
          return;
        }
        if (!(*last)->is_interim()) {
          take(**last);
          keep_alive = false;
          return;
        }
      }
    }
    got_bytes = true;
    parser.Commit(*n);
  }
}

}  // namespace

Status<ClientResponse> Client::Do(const ClientRequest& request) {
  const auto start = Clock::now();
  const std::string_view method_name = MethodName(request.method);
  auto fail = [&](ErrorCode code, std::string_view what) {
    return MakeError(code, fmt::format("http client: {} {}: {}", method_name.empty() ? "?" : method_name,
                                       request.url, what));
  };
  if (request.method == Method::kOther || request.method == Method::kConnect) {
    return fail(ErrorCode::kInvalidArgument, "the method must be GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS or TRACE");
  }
  auto url = ParseHttpUrl(request.url);
  if (!url) return fail(ErrorCode::kInvalidArgument, url.error().message());
  const sched::Deadline deadline =
      request.deadline == sched::Deadline::max() ? start + options_.default_timeout : request.deadline;

  std::string bytes;
  RequestWriter w(bytes);
  if (auto s = w.Start(request.method, url->target); !s) return fail(ErrorCode::kInvalidArgument, s.error().message());
  (void)w.AddHeader("Host", url->host);
  for (const auto& h : request.headers) {
    if (EqualsIgnoreCase(h.name, "host")) continue;
    if (auto s = w.AddHeader(h.name, h.value); !s) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("request header \"{}\": {}", h.name, s.error().message()));
    }
  }
  if (!options_.keep_alive) w.SetClose();
  w.Finish(request.body);

  auto timed_out = [&] {
    return fail(ErrorCode::kTimedOut,
                fmt::format("no complete response within {} ms",
                            std::chrono::round<std::chrono::milliseconds>(deadline - start).count()));
  };
  for (int attempt = 0;; ++attempt) {
    net::TcpConn conn = attempt == 0 && options_.keep_alive ? TakeIdle(url->endpoint) : net::TcpConn();
    const bool reused = conn.is_open();
    if (!reused) {
      auto c = stack_->Connect(url->endpoint, deadline);
      if (!c) {
        if (c.error().code() == ErrorCode::kTimedOut) return timed_out();
        return fail(c.error().code(), fmt::format("connecting to {}: {}", url->endpoint.ToString(), c.error().message()));
      }
      conn = std::move(*c);
    }
    Attempt a;
    Exchange(conn, bytes, request.method, deadline, options_, a.result, a.keep_alive, a.got_bytes);
    if (a.result) {
      if (options_.keep_alive && a.keep_alive) {
        PutIdle(url->endpoint, std::move(conn));
      }
      return std::move(*a.result);
    }
    const ErrorCode code = a.result.error().code();
    if (reused && !a.got_bytes && code != ErrorCode::kTimedOut) continue;  // a stale keep-alive connection
    if (code == ErrorCode::kTimedOut) return timed_out();
    return fail(code, fmt::format("{} ({})", a.result.error().message(), url->endpoint.ToString()));
  }
}

}  // namespace junction::http
