// client.h — an HTTP/1.1 client over the junction socket API (any stack: kernel, loopback,
// dpdk), for uthreads: what a function's outbound call goes through.
//
//   Client client(stack.get());                       // the node's stack; outlived by it
//   auto r = client.Do({.method = Method::kPost, .url = "http://127.0.0.1:8080/function/echo",
//                       .body = "hi", .deadline = Clock::now() + 2s});
//   if (!r) log(r.error().message());                 // says what failed and where
//   else use(r->status, r->Header("content-type"), r->body);
//
// One call: parse the URL (url.h: IPv4 literals and localhost only, no DNS), take an idle
// keep-alive connection to that endpoint or connect, write the request (RequestWriter: the
// body with Content-Length), read the response (ResponseParser: Content-Length, chunked or
// close-delimited bodies; interim 1xx skipped), and keep the connection for the next call when
// both sides allow it. A reused connection that the server had closed meanwhile (EOF or reset
// before any byte of the response) is retried once on a new connection, as browsers and Go's
// http.Transport do; nothing else is retried.
//
// Deadline: the whole call (connect, write, read) ends by `deadline` or fails with kTimedOut;
// Deadline::max() means options.default_timeout from now. Limits: response head bytes, header
// count and body bytes (kResourceExhausted past them; the connection is dropped).
//
// Errors (Status, messages start "http client: METHOD URL: "): kInvalidArgument (bad URL,
// method, or request header), kTimedOut, kIo/kClosed (connect refused, reset, cut short),
// kResourceExhausted (a limit), kIo for a malformed response ("malformed response: ...").
//
// Threads: Do from uthreads only, on any core, several at once (each call has its own
// connection; only the idle list is shared, behind a spinlock held for a push or a pop). It
// parks the calling uthread while connecting, writing and reading: never the core. The
// Client must be destroyed on a uthread before its Stack (it closes idle connections).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "junction/base/error.h"
#include "junction/http/headers.h"
#include "junction/http/method.h"
#include "junction/net/stack.h"
#include "junction/sched/spinlock.h"
#include "junction/sched/tsc.h"

namespace junction::http {

struct ClientOptions {
  std::size_t max_response_body_bytes = 8 * 1024 * 1024;
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_header_count = 100;
  // The deadline of a call that gives none.
  sched::Clock::duration default_timeout = std::chrono::seconds(30);
  // Keep connections open between calls (false: every call sends "Connection: close").
  bool keep_alive = true;
  std::size_t max_idle_per_endpoint = 8;
};

struct ClientRequest {
  Method method = Method::kGet;  // not kOther or kConnect
  std::string_view url;          // http://IPV4[:PORT]/path or http://localhost[:PORT]/path
  // Extra fields. Host is the client's (from the URL) and skipped here; Content-Length,
  // Transfer-Encoding and Connection are refused (kInvalidArgument).
  std::span<const Header> headers;
  std::string_view body;
  sched::Deadline deadline = sched::Deadline::max();
};

// A response, owning its bytes.
struct ClientResponse {
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;  // in arrival order
  std::string body;                                          // decoded (chunks joined)

  // The first field called `name` (any case).
  std::optional<std::string_view> Header(std::string_view name) const;
};

class Client {
 public:
  // `stack` must outlive the client.
  explicit Client(net::Stack* stack, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  [[nodiscard]] Status<ClientResponse> Do(const ClientRequest& request);

  // Idle keep-alive connections held now (all endpoints).
  std::size_t idle_connections() const;
  // Closes every idle connection (uthread only).
  void CloseIdle();

 private:
  struct Attempt;
  net::TcpConn TakeIdle(const net::Endpoint& ep);
  void PutIdle(const net::Endpoint& ep, net::TcpConn conn);

  net::Stack* stack_;
  const ClientOptions options_;
  mutable sched::Spinlock idle_mu_;
  std::map<net::Endpoint, std::vector<net::TcpConn>> idle_;
};

}  // namespace junction::http
