// server_test.cc — HTTP/1.1 conformance of the server over real sockets (kernel and loopback
// stacks): keep-alive, pipelining, chunked bodies, 100-continue, HEAD, limits, malformed
// requests, slow clients and graceful shutdown.
#include "junction/http/server/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "junction/http/response_parser.h"
#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace junction::http {
namespace {
using namespace std::chrono_literals;
using net::Endpoint;
using sched::Clock;

// Echoes method, path, query and body; /sleep waits 50 ms first; /big answers 64 MiB.
void EchoHandler(const Request& req, Reply& resp) {
  if (req.path == "/sleep") sched::SleepFor(50ms);
  if (req.path == "/big") {
    resp.body.assign(64 << 20, 'b');
    return;
  }
  resp.headers.emplace_back("Content-Type", "text/plain");
  resp.headers.emplace_back("X-Path", std::string(req.path));
  AppendHeaderLine(resp.header_lines, "X-Line", "pre-formatted");
  AppendHeaderLine(resp.header_lines, "X-Line-Two", "two");
  resp.body = std::string(req.method_name) + " " + std::string(req.path) + "?" + std::string(req.query) +
              " " + std::string(req.body);
}

struct Got {
  int status = 0;
  std::string body;
  bool keep_alive = true;
  std::string x_path, x_line, x_line_two;  // headers of EchoHandler's replies
};

Got FromResponse(const Response& r) {
  Got g{r.status, std::string(r.body), r.keep_alive};
  g.x_path = std::string(r.headers.Find("X-Path").value_or(""));
  g.x_line = std::string(r.headers.Find("X-Line").value_or(""));
  g.x_line_two = std::string(r.headers.Find("X-Line-Two").value_or(""));
  return g;
}

// Sends raw bytes and reads `count` responses (or until EOF).
std::vector<Got> Exchange(net::Stack& stack, Endpoint ep, std::string_view bytes, int count,
                            bool head = false) {
  std::vector<Got> replies;
  auto conn = stack.Connect(ep, Clock::now() + 2s);
  EXPECT_TRUE(conn.has_value()) << conn.error().message();
  if (!conn) return replies;
  EXPECT_TRUE(conn->Write(std::as_bytes(std::span(bytes.data(), bytes.size())), Clock::now() + 2s).has_value());
  ResponseParser parser;
  // HEAD tests send HEAD first, then GETs.
  for (int i = 0; i < count; ++i) parser.ExpectResponseTo(head && i == 0 ? Method::kHead : Method::kGet);
  char buf[4096];
  while (static_cast<int>(replies.size()) < count) {
    auto r = parser.Next();
    if (!r) {
      ADD_FAILURE() << "bad response: " << r.error().message();
      break;
    }
    if (*r != nullptr) {
      replies.push_back(FromResponse(**r));
      continue;
    }
    auto n = conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 3s);
    if (!n || *n == 0) {
      auto last = parser.FinishAtEof();
      if (last && *last != nullptr) {
        replies.push_back(FromResponse(**last));
        replies.back().keep_alive = false;
      }
      break;
    }
    parser.Feed(std::string_view(buf, *n));
  }
  return replies;
}

class ServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Runs `body(stack, endpoint)` with a server using `options` listening on 127.0.0.1.
  void WithServer(ServerOptions options, std::function<void(net::Stack&, Endpoint, Server&)> body) {
    sched::testing::RunOnCores(2, [&] {
      auto stack = net::CreateStack(GetParam());
      ASSERT_TRUE(stack.has_value()) << stack.error().message();
      auto server = Server::Start(**stack, *Endpoint::Parse("127.0.0.1:0"), EchoHandler, options);
      ASSERT_TRUE(server.has_value()) << server.error().message();
      body(**stack, (*server)->local_endpoint(), **server);
      (*server)->Shutdown(1s);
      server->reset();
      stack->reset();
    });
  }
};

TEST_P(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  WithServer({}, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto r = Exchange(st, ep, "GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, 200);
    EXPECT_EQ(r[0].body, "GET /a?x=1 ");
    EXPECT_TRUE(r[0].keep_alive);
  });
}

TEST_P(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  WithServer({}, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto r = Exchange(st, ep,
                      "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
                      "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                      "GET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                      3);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].body, "GET /1? ");
    EXPECT_EQ(r[1].body, "POST /2? abc");
    EXPECT_EQ(r[2].body, "GET /3? ");
    EXPECT_FALSE(r[2].keep_alive);
    EXPECT_EQ(srv.stats().requests, 3u);
  });
}

TEST_P(ServerTest, ChunkedRequestBodyIsDecoded) {
  WithServer({}, [](net::Stack& st, Endpoint ep, Server&) {
    auto r = Exchange(st, ep,
                      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n",
                      1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].body, "POST /c? abcdefg");
  });
}

TEST_P(ServerTest, ExpectContinueGetsAnInterimResponse) {
  WithServer({}, [](net::Stack& st, Endpoint ep, Server&) {
    auto conn = st.Connect(ep, Clock::now() + 2s);
    ASSERT_TRUE(conn.has_value());
    std::string head = "POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
    ASSERT_TRUE(conn->Write(std::as_bytes(std::span(head.data(), head.size()))).has_value());
    char buf[256];
    auto n = conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 2s);
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(std::string_view(buf, *n), "HTTP/1.1 100 Continue\r\n\r\n");
    ASSERT_TRUE(conn->Write(std::as_bytes(std::span("hi", 2))).has_value());
    n = conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 2s);
    ASSERT_TRUE(n.has_value());
    EXPECT_NE(std::string_view(buf, *n).find("POST /e? hi"), std::string_view::npos);
  });
}

TEST_P(ServerTest, HeadGetsHeadersWithoutABody) {
  WithServer({}, [](net::Stack& st, Endpoint ep, Server&) {
    auto r = Exchange(st, ep, "HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /g HTTP/1.1\r\nHost: h\r\n\r\n", 2, true);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].status, 200);
    EXPECT_EQ(r[0].body, "");
    // Checked headers and the handler's pre-formatted header lines, on HEAD and GET alike.
    for (const Got& g : r) {
      EXPECT_EQ(g.x_path, g.status == 200 && &g == &r[0] ? "/h" : "/g");
      EXPECT_EQ(g.x_line, "pre-formatted");
      EXPECT_EQ(g.x_line_two, "two");
    }
  });
}

TEST_P(ServerTest, LimitsAndMalformedRequestsGetTheirStatusAndClose) {
  ServerOptions o;
  o.parser.max_header_bytes = 512;
  o.parser.max_body_bytes = 64;
  WithServer(o, [](net::Stack& st, Endpoint ep, Server&) {
    auto big_header = Exchange(st, ep, "GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(1000, 'a') + "\r\n\r\n", 1);
    ASSERT_EQ(big_header.size(), 1u);
    EXPECT_EQ(big_header[0].status, 431);
    EXPECT_FALSE(big_header[0].keep_alive);
    auto big_body = Exchange(st, ep, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n", 1);
    ASSERT_EQ(big_body.size(), 1u);
    EXPECT_EQ(big_body[0].status, 413);
    auto garbage = Exchange(st, ep, "GARBAGE\r\n\r\n", 1);
    ASSERT_EQ(garbage.size(), 1u);
    EXPECT_EQ(garbage[0].status, 400);
    EXPECT_NE(garbage[0].body.find("\"error\""), std::string::npos);
  });
}

TEST_P(ServerTest, SlowClientGets408) {
  ServerOptions o;
  o.read_timeout = 100ms;
  WithServer(o, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto r = Exchange(st, ep, "GET / HTTP/1.1\r\nHost: h\r\n", 1);  // the head never ends
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, 408);
    EXPECT_GE(srv.stats().timeouts, 1u);
  });
}

// A malformed request's 400 ends the connection: what was pipelined after it is not served.
TEST_P(ServerTest, MalformedRequestGets400AndTheConnectionCloses) {
  WithServer({}, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto r = Exchange(st, ep, "GARBAGE\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n", 2);
    ASSERT_EQ(r.size(), 1u) << "only the 400, then end of stream";
    EXPECT_EQ(r[0].status, 400);
    EXPECT_FALSE(r[0].keep_alive) << "the 400 says Connection: close";
    EXPECT_EQ(srv.stats().requests, 1u) << "the 400 only: /after was never answered";
  });
}

// A body that trickles in (one byte per 40 ms) slower than read_timeout allows: 408, close.
TEST_P(ServerTest, BodySlowerThanTheReadTimeoutGets408) {
  ServerOptions o;
  o.read_timeout = 150ms;
  WithServer(o, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto conn = st.Connect(ep, Clock::now() + 2s);
    ASSERT_TRUE(conn.has_value()) << conn.error().message();
    const std::string head = "POST /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 20\r\n\r\n";
    ASSERT_TRUE(conn->Write(std::as_bytes(std::span(head.data(), head.size()))).has_value());
    std::atomic<bool> stop{false};
    auto trickle = *sched::Spawn([&] {
      for (int i = 0; i < 20 && !stop.load(); ++i) {
        if (!conn->Write(std::as_bytes(std::span("x", 1)), Clock::now() + 1s)) break;
        sched::SleepFor(40ms);
      }
    });
    const auto t0 = Clock::now();
    ResponseParser parser;
    parser.ExpectResponseTo(Method::kPost);
    char buf[1024];
    int status = 0;
    bool keep_alive = true;
    while (status == 0) {
      auto r = parser.Next();
      ASSERT_TRUE(r.has_value()) << r.error().message();
      if (*r != nullptr) {
        status = (*r)->status;
        keep_alive = (*r)->keep_alive;
        break;
      }
      auto n = conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 3s);
      ASSERT_TRUE(n.has_value() && *n > 0) << "no 408 before the connection ended";
      parser.Commit(0);
      parser.Feed(std::string_view(buf, *n));
    }
    const auto took = Clock::now() - t0;
    stop = true;
    trickle.Join();
    EXPECT_EQ(status, 408);
    EXPECT_FALSE(keep_alive);
    EXPECT_LT(took, 700ms) << "answered at the read timeout, not after the 800 ms body";
    EXPECT_GE(srv.stats().timeouts, 1u);
    EXPECT_EQ(srv.stats().responses_4xx, 1u);
  });
}

// A keep-alive connection with no request for idle_timeout is closed by the server.
TEST_P(ServerTest, IdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  ServerOptions o;
  o.idle_timeout = 150ms;
  o.drain_check = 20ms;
  WithServer(o, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto conn = st.Connect(ep, Clock::now() + 2s);
    ASSERT_TRUE(conn.has_value()) << conn.error().message();
    const std::string req = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    ASSERT_TRUE(conn->Write(std::as_bytes(std::span(req.data(), req.size()))).has_value());
    char buf[4096];
    auto n = conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 2s);
    ASSERT_TRUE(n.has_value() && *n > 0);
    ASSERT_NE(std::string_view(buf, *n).find("GET /a? "), std::string_view::npos);
    const auto t0 = Clock::now();
    auto eof = conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 3s);
    const auto waited = Clock::now() - t0;
    ASSERT_TRUE(eof.has_value()) << eof.error().message();
    EXPECT_EQ(*eof, 0u) << "end of stream, not more bytes";
    EXPECT_GE(waited, 100ms) << "not before the idle timeout";
    EXPECT_LT(waited, 1500ms);
    for (int i = 0; i < 100 && srv.stats().connections_open > 0; ++i) sched::SleepFor(10ms);
    EXPECT_EQ(srv.stats().connections_open, 0u);
  });
}

// A client that stops reading: the response cannot be written within write_timeout and the
// connection is dropped (counted as a timeout), not held forever.
TEST_P(ServerTest, ClientThatDoesNotReadIsDroppedAfterTheWriteTimeout) {
  ServerOptions o;
  o.write_timeout = 200ms;
  WithServer(o, [](net::Stack& st, Endpoint ep, Server& srv) {
    auto conn = st.Connect(ep, Clock::now() + 2s);
    ASSERT_TRUE(conn.has_value()) << conn.error().message();
    const std::string req = "GET /big HTTP/1.1\r\nHost: h\r\n\r\n";  // 64 MiB we never read
    ASSERT_TRUE(conn->Write(std::as_bytes(std::span(req.data(), req.size()))).has_value());
    for (int i = 0; i < 100 && srv.stats().connections_accepted == 0; ++i) sched::SleepFor(10ms);
    ASSERT_EQ(srv.stats().connections_accepted, 1u);
    for (int i = 0; i < 300 && srv.stats().connections_open > 0; ++i) sched::SleepFor(10ms);
    EXPECT_EQ(srv.stats().connections_open, 0u) << "still open 3 s after a 200 ms write timeout";
    EXPECT_GE(srv.stats().timeouts, 1u);
  });
}

TEST_P(ServerTest, ShutdownLetsAnInFlightRequestFinish) {
  sched::testing::RunOnCores(2, [&] {
    auto stack = net::CreateStack(GetParam());
    ASSERT_TRUE(stack.has_value());
    auto server = Server::Start(**stack, *Endpoint::Parse("127.0.0.1:0"), EchoHandler);
    ASSERT_TRUE(server.has_value());
    const Endpoint ep = (*server)->local_endpoint();
    std::vector<Got> got;
    auto client = *sched::Spawn([&] { got = Exchange(**stack, ep, "GET /sleep HTTP/1.1\r\nHost: h\r\n\r\n", 1); });
    sched::SleepFor(20ms);  // the request is inside its 50 ms handler now
    const auto t0 = Clock::now();
    (*server)->Shutdown(2s);
    EXPECT_LT(Clock::now() - t0, 1s);
    client.Join();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    EXPECT_FALSE(got[0].keep_alive) << "a draining server closes after the in-flight response";
    auto late = (*stack)->Connect(ep, Clock::now() + 500ms);
    EXPECT_FALSE(late.has_value() && late->Read(std::as_writable_bytes(std::span((char*)nullptr, 0))).has_value());
    server->reset();
    stack->reset();
  });
}

INSTANTIATE_TEST_SUITE_P(Stacks, ServerTest, ::testing::Values("kernel", "loopback"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace junction::http
