// server.cc — accept loops, the per-connection request loop, timeouts and draining.
#include "junction/http/server/server.h"

#include <ctime>
#include <exception>

#include "junction/http/json_error.h"
#include "junction/http/request_parser.h"
#include "junction/http/response_writer.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace junction::http {

using sched::Clock;
using sched::Deadline;

Status<std::unique_ptr<Server>> Server::Start(net::Stack& stack, net::Endpoint endpoint,
                                              Handler handler, ServerOptions options) {
  sched::Runtime* rt = sched::Runtime::Current();
  if (rt == nullptr || !sched::InRuntime()) {
    return MakeError(ErrorCode::kUnavailable, "http::Server::Start must be called from a uthread");
  }
  std::unique_ptr<Server> s(new Server(std::move(handler), std::move(options)));
  s->stats_ = std::vector<CoreStats>(static_cast<std::size_t>(rt->num_cores()));
  auto listener = stack.Listen(endpoint, s->options_.listen);
  if (!listener) return std::unexpected(listener.error());
  s->listener_ = std::move(*listener);
  s->local_ = s->listener_.local_endpoint();
  for (int core = 0; core < rt->num_cores(); ++core) {
    auto h = sched::Spawn([srv = s.get()] { srv->AcceptLoop(); },
                          {.core = core, .stealable = false});
    if (!h) {
      s->Shutdown(Clock::duration::zero());
      return std::unexpected(h.error());
    }
    s->acceptors_.push_back(std::move(*h));
  }
  return s;
}

Server::~Server() {
  if (!shut_down_) Shutdown(Clock::duration::zero());
}

Server::CoreStats& Server::Mine() {
  const int c = sched::CurrentCore();
  return stats_[c < 0 ? 0 : static_cast<std::size_t>(c)];
}

ServerStats Server::stats() const {
  ServerStats out;
  std::uint64_t closed = 0;
  for (const CoreStats& c : stats_) {
    out.connections_accepted += c.accepted.load(std::memory_order_relaxed);
    closed += c.closed.load(std::memory_order_relaxed);
    out.requests += c.requests.load(std::memory_order_relaxed);
    out.responses_4xx += c.r4xx.load(std::memory_order_relaxed);
    out.responses_5xx += c.r5xx.load(std::memory_order_relaxed);
    out.timeouts += c.timeouts.load(std::memory_order_relaxed);
  }
  out.connections_open = out.connections_accepted - closed;
  return out;
}

void Server::CountStatus(int status) {
  CoreStats& m = Mine();
  Bump(m.requests);
  if (status >= 500) {
    Bump(m.r5xx);
  } else if (status >= 400) {
    Bump(m.r4xx);
  }
}

void Server::AcceptLoop() {
  while (!draining_.load(std::memory_order_acquire)) {
    auto conn = listener_.Accept();
    if (!conn) {
      if (conn.error().code() == ErrorCode::kClosed) return;
      continue;  // a failed accept (e.g. the peer reset first) does not stop the server
    }
    Bump(Mine().accepted);
    connections_.Add(1);
    auto spawned = sched::SpawnDetached([this, c = std::move(*conn)]() mutable {
      ServeConnection(std::move(c));
      Bump(Mine().closed);
      connections_.Done();
    });
    if (!spawned) {
      Bump(Mine().closed);
      connections_.Done();  // the conn was destroyed with the lambda: closed
    }
  }
}

namespace {

Status<void> Flush(net::TcpConn& conn, std::string& out, Clock::duration write_timeout,
                   Deadline now = Deadline::min()) {
  if (out.empty()) return {};
  if (now == Deadline::min()) now = sched::Now();
  auto w = conn.Write(std::as_bytes(std::span(out.data(), out.size())), now + write_timeout);
  out.clear();
  return w;
}

// A connection's read waits end on a 10 ms grid. Every wait arms a timer that stays in the
// core's heap after the data came (lazy cancellation, timer_heap.h); on a grid the stale ones
// expire in batches, so the core checks its timers once per grain instead of on nearly
// every scheduler pass (a clock read each). Timeouts of seconds do not mind 10 ms late.
Deadline OnGrid(Deadline d) {
  constexpr Clock::duration kGrain = std::chrono::milliseconds(10);
  if (d == Deadline::max()) return d;
  const Clock::duration t = d.time_since_epoch();
  return Deadline(((t + kGrain - Clock::duration(1)) / kGrain) * kGrain);
}

std::string JsonError(std::string_view message) {
  std::string body;
  AppendJsonError(body, message);
  return body;
}

}  // namespace

void Reply::Reset() {
  // A connection that once sent a large body should not keep that much memory while idle.
  constexpr std::size_t kKeepBytes = 16 * 1024;
  status = 200;
  headers.clear();
  if (header_lines.capacity() > kKeepBytes) std::string().swap(header_lines);
  header_lines.clear();
  if (body.capacity() > kKeepBytes) std::string().swap(body);
  body.clear();
  close = false;
  stream = nullptr;
}

bool Server::Respond(const Request& req, Reply& resp, std::string& out, bool close, net::TcpConn& conn) {
  resp.Reset();
  try {
    handler_(req, resp);
  } catch (const std::exception& e) {
    resp = Reply{};
    resp.status = 500;
    resp.headers.emplace_back("Content-Type", "application/json");
    resp.body = JsonError(std::string("the handler failed: ") + e.what());
  }
  CountStatus(resp.status);
  ResponseWriter w(out, ContextFor(req));
  w.Start(resp.status);
  for (const auto& [k, v] : resp.headers) {
    // A header the writer refuses (framing headers, CR/LF in a value) is a handler bug; it
    // is dropped rather than allowed to corrupt the response head.
    (void)w.AddHeader(k, v);
  }
  if (!resp.header_lines.empty()) w.AddHeaderLines(resp.header_lines);
  w.AddDate(std::time(nullptr));
  // Read after the handler: a shutdown that began while it ran still closes this connection.
  if (resp.close || close || draining_.load(std::memory_order_acquire)) w.SetClose();
  if (!resp.stream) {
    w.Finish(resp.body);
    return w.keep_alive();
  }
  w.SetClose();
  w.BeginChunked();
  bool ok = Flush(conn, out, options_.write_timeout).has_value();
  if (ok && w.body_allowed()) {
    resp.stream([&](std::string_view data) {
      if (!ok || draining_.load(std::memory_order_acquire)) return false;
      if (data.empty()) return true;
      w.WriteChunk(data);
      ok = Flush(conn, out, options_.write_timeout).has_value();
      return ok;
    });
  }
  if (ok) (void)w.EndChunked();
  return false;
}

void Server::ServeConnection(net::TcpConn conn) {
  RequestParser parser(options_.parser);
  std::string out;
  Reply reply;  // reused for each request (Reply::Reset)
  Deadline request_deadline = Deadline::max();  // set when a request's first byte arrives
  Deadline idle_deadline = Clock::now() + options_.idle_timeout;
  bool answered = false;  // a request was answered since the idle deadline was last set
  while (true) {
    // Answer every complete request already buffered (pipelining), gathering the responses.
    while (true) {
      auto next = parser.Next();
      if (!next) {
        CountStatus(parser.error_status());
        AppendErrorResponse(out, parser.error_status(), next.error().message());
        (void)Flush(conn, out, options_.write_timeout);
        return;
      }
      if (*next == nullptr) {
        if (parser.WantsContinue()) {
          ResponseWriter::AppendContinue(out);
          parser.ContinueSent();
        }
        break;
      }
      const bool keep_alive = Respond(**next, reply, out, /*close=*/false, conn);
      if (!keep_alive) {
        (void)Flush(conn, out, options_.write_timeout);
        return;
      }
      answered = true;
      request_deadline = Deadline::max();
    }
    // One clock reading per batch of answers serves the idle deadline, the write deadline and
    // the read's wait below (a few vDSO calls fewer per request).
    const Deadline now = sched::Now();
    if (answered) idle_deadline = now + options_.idle_timeout;
    answered = false;
    if (auto f = Flush(conn, out, options_.write_timeout, now); !f) {
      if (f.error().code() == ErrorCode::kTimedOut) Bump(Mine().timeouts);
      return;
    }
    const bool in_request = parser.buffered_bytes() > 0;
    if (in_request && request_deadline == Deadline::max()) {
      request_deadline = now + options_.read_timeout;
    }
    if (!in_request && draining_.load(std::memory_order_acquire)) return;
    // Idle connections wake every drain_check to notice a shutdown.
    const Deadline wait = OnGrid(in_request ? request_deadline : std::min(idle_deadline, now + options_.drain_check));
    std::span<char> space = parser.WritableSpace(options_.read_chunk_bytes);
    auto n = conn.Read(std::as_writable_bytes(space), wait);
    if (!n) {
      if (n.error().code() != ErrorCode::kTimedOut) return;  // reset or closed: nothing to answer
      const Deadline now = Clock::now();
      if (in_request && now >= request_deadline) {
        Bump(Mine().timeouts);
        CountStatus(408);
        AppendErrorResponse(out, 408, "the request did not arrive in time; send it faster or raise the read timeout");
        (void)Flush(conn, out, options_.write_timeout);
        return;
      }
      if (!in_request && now >= idle_deadline) {
        Bump(Mine().timeouts);
        return;
      }
      continue;  // a drain check
    }
    if (*n == 0) {
      parser.Commit(0);
      // The peer finished sending: answer what is complete, then close.
      while (true) {
        auto last = parser.FinishAtEof();
        if (!last) {
          CountStatus(parser.error_status());
          AppendErrorResponse(out, parser.error_status(), last.error().message());
          break;
        }
        if (*last == nullptr) break;
        Respond(**last, reply, out, /*close=*/true, conn);
      }
      (void)Flush(conn, out, options_.write_timeout);
      return;
    }
    parser.Commit(*n);
  }
}

void Server::Shutdown(Clock::duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  draining_.store(true, std::memory_order_release);
  listener_.Close();
  for (auto& a : acceptors_) a.Join();
  acceptors_.clear();
  connections_.WaitUntil(Clock::now() + grace);
}

}  // namespace junction::http
