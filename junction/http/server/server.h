// server.h — an HTTP/1.1 server over the junction socket API: one uthread per connection.
//
// Keep-alive, pipelining, Content-Length and chunked request bodies, Expect: 100-continue
// and HEAD come from the codec (request_parser.h, response_writer.h); this layer owns the
// connection: accept loops (one unstealable acceptor uthread per runtime core), timeouts, and
// graceful shutdown.
//
//   auto server = Server::Start(*stack, *Endpoint::Parse("127.0.0.1:8080"),
//       [](const Request& req, Reply& resp) { resp.body = "hello\n"; });
//   ...
//   (*server)->Shutdown(std::chrono::seconds(5));
//
// Timeouts: a request must arrive whole within read_timeout of its first byte (else 408 and
// close); a keep-alive connection with no request in progress is closed after idle_timeout;
// a response must be written within write_timeout (else the connection is dropped).
// Limits (header bytes 431, header count 431, body bytes 413) are the parser's. A malformed
// request gets 400 with a JSON error body and the connection is closed.
//
// Threading: Start/Shutdown from uthreads of the runtime the stack belongs to. The handler
// runs on the connection's uthread and may block cooperatively (sleep, I/O): that parks only
// its uthread. Views in the Request are valid only during the handler call.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "junction/base/error.h"
#include "junction/http/parser_options.h"
#include "junction/http/request.h"
#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"
#include "junction/sched/tsc.h"

namespace junction::http {

struct ServerOptions {
  ParserOptions parser;
  sched::Clock::duration read_timeout = std::chrono::seconds(30);
  sched::Clock::duration write_timeout = std::chrono::seconds(30);
  sched::Clock::duration idle_timeout = std::chrono::seconds(60);
  // How often a connection idle between requests looks at the shutdown flag.
  sched::Clock::duration drain_check = std::chrono::milliseconds(200);
  std::size_t read_chunk_bytes = 16 * 1024;
  net::ListenOptions listen;
};

// What a handler fills in (the server side; ResponseParser's Response is the client side).
// Content-Length, Transfer-Encoding and Connection are the server's to write.
struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // checked as they are written
  // Lines the handler formatted itself (AppendHeaderLine), written after `headers` without
  // checks or copies: for the fields a handler generates on every call and vouches for (a
  // token name, no CR/LF/NUL in the value, no framing field).
  std::string header_lines;
  std::string body;
  bool close = false;  // close the connection after this response
  // A streamed body (a log follow, say). When set, `body` is ignored: the server sends the
  // head with chunked framing (close-delimited for HTTP/1.0), then calls stream(emit) on the
  // connection's uthread after the handler returns (the Request's views are still valid).
  // emit(data) sends `data` as one chunk at once (no write when empty) and returns false once
  // the client is gone or the server drains: the producer should stop then. The connection
  // closes after a streamed response. Nothing is streamed for HEAD.
  std::function<void(const std::function<bool(std::string_view)>& emit)> stream;

  // Back to a fresh Reply's values, keeping small buffers' capacity: the server reuses one
  // Reply per connection, so a handler's reserve/append does not allocate on every request.
  void Reset();
};

using Handler = std::function<void(const Request&, Reply&)>;

struct ServerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_open = 0;
  std::uint64_t requests = 0;
  std::uint64_t responses_4xx = 0;
  std::uint64_t responses_5xx = 0;
  std::uint64_t timeouts = 0;  // 408s and idle/write timeouts
};

class Server {
 public:
  // Listens and starts the acceptors. Errors: the stack's Listen errors (address in use...).
  static Status<std::unique_ptr<Server>> Start(net::Stack& stack, net::Endpoint endpoint,
                                               Handler handler, ServerOptions options = {});
  ~Server();  // calls Shutdown(0) if it was not called

  // Stops accepting; requests in flight finish and get "Connection: close"; idle
  // connections close. Returns once every connection is closed or `grace` has passed (then
  // the remaining ones are abandoned to close on their own at their next step). Uthread only.
  void Shutdown(sched::Clock::duration grace);

  net::Endpoint local_endpoint() const { return local_; }
  ServerStats stats() const;

 private:
  Server(Handler handler, ServerOptions options) : handler_(std::move(handler)), options_(std::move(options)) {}
  void AcceptLoop();
  void ServeConnection(net::TcpConn conn);
  // Runs the handler for one request and appends its response; false: close after sending.
  // A streamed response is written to `conn` (with what `out` held before it) right away.
  bool Respond(const Request& req, Reply& resp, std::string& out, bool close, net::TcpConn& conn);
  void CountStatus(int status);

  Handler handler_;
  ServerOptions options_;
  net::TcpListener listener_;
  net::Endpoint local_;
  std::vector<sched::JoinHandle> acceptors_;
  sched::WaitGroup connections_;
  std::atomic<bool> draining_{false};
  bool shut_down_ = false;
  // Per-core counters: each core writes only its own line.
  struct alignas(64) CoreStats {
    std::atomic<std::uint64_t> accepted{0}, closed{0}, requests{0}, r4xx{0}, r5xx{0}, timeouts{0};
  };
  CoreStats& Mine();
  static void Bump(std::atomic<std::uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::vector<CoreStats> stats_;
};

}  // namespace junction::http
