// client_test.cc — the HTTP client against the project's own server (and a raw listener for
// close-delimited bodies) on the loopback and kernel stacks: Content-Length and chunked
// bodies, keep-alive reuse and its retry, limits, errors, and the deadline (which parks only
// the calling uthread).
#include "junction/http/client/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "junction/http/client/url.h"
#include "junction/http/server/server.h"
#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace junction::http {
namespace {
using namespace std::chrono_literals;
using net::Endpoint;
using sched::Clock;

TEST(HttpUrl, IPv4AndLocalhostOnly) {
  auto u = ParseHttpUrl("http://127.0.0.1:8080/function/echo?x=1#frag");
  ASSERT_TRUE(u.has_value()) << u.error().message();
  EXPECT_EQ(u->endpoint.ToString(), "127.0.0.1:8080");
  EXPECT_EQ(u->host, "127.0.0.1:8080");
  EXPECT_EQ(u->target, "/function/echo?x=1");
  auto l = ParseHttpUrl("HTTP://localhost?q");
  ASSERT_TRUE(l.has_value()) << l.error().message();
  EXPECT_EQ(l->endpoint.ToString(), "127.0.0.1:80");
  EXPECT_EQ(l->target, "/?q");
  auto why = [](std::string_view url) {
    auto r = ParseHttpUrl(url);
    return r ? std::string("accepted") : r.error().message();
  };
  EXPECT_NE(why("https://10.0.0.1/").find("https is not supported"), std::string::npos);
  EXPECT_NE(why("ftp://10.0.0.1/").find("only http://"), std::string::npos);
  EXPECT_NE(why("http://example.com/").find("no DNS resolver"), std::string::npos) << why("http://example.com/");
  EXPECT_NE(why("http://10.0.0.1:0/").find("port"), std::string::npos);
  EXPECT_NE(why("http://10.0.0.1:99999/").find("port"), std::string::npos);
  EXPECT_NE(why("http:///x").find("no host"), std::string::npos);
  EXPECT_NE(why("http://u:p@10.0.0.1/").find("user info"), std::string::npos);
  EXPECT_NE(why("http://[::1]:80/").find("IPv6"), std::string::npos);
  EXPECT_NE(why("http://10.0.0.1/a b").find("whitespace"), std::string::npos);
  EXPECT_NE(why("http://example.com/").find("give http://IPV4[:PORT][/path]"), std::string::npos);
}

// Echoes method, target and body; /chunked streams three chunks; /sleep waits 500 ms; /big
// answers 100 KB; /headers returns a custom header.
void Handler(const Request& req, Reply& resp) {
  if (req.path == "/sleep") sched::SleepFor(500ms);
  if (req.path == "/chunked") {
    resp.stream = [](const std::function<bool(std::string_view)>& emit) {
      emit("one,");
      emit("two,");
      emit("three");
    };
    return;
  }
  if (req.path == "/big") {
    resp.body = std::string(100 * 1024, 'b');
    return;
  }
  resp.headers.emplace_back("X-Seen-Host", std::string(req.headers.Find("host").value_or("")));
  resp.headers.emplace_back("X-Seen-Token", std::string(req.headers.Find("x-token").value_or("")));
  resp.status = req.path == "/created" ? 201 : 200;
  resp.body = std::string(req.method_name) + " " + std::string(req.path) + "?" + std::string(req.query) + " " +
              std::string(req.body);
}

class ClientTest : public ::testing::TestWithParam<std::string> {
 protected:
  void WithServer(ServerOptions options, std::function<void(net::Stack&, std::string, Server&)> body) {
    sched::testing::RunOnCores(2, [&] {
      auto stack = net::CreateStack(GetParam());
      ASSERT_TRUE(stack.has_value()) << stack.error().message();
      auto server = Server::Start(**stack, *Endpoint::Parse("127.0.0.1:0"), Handler, options);
      ASSERT_TRUE(server.has_value()) << server.error().message();
      body(**stack, "http://" + (*server)->local_endpoint().ToString(), **server);
      (*server)->Shutdown(1s);
      server->reset();
      stack->reset();
    });
  }
};

TEST_P(ClientTest, ContentLengthRequestsAndResponses) {
  WithServer({}, [](net::Stack& st, std::string base, Server&) {
    Client c(&st);
    const Header extra[] = {{"X-Token", "t1"}, {"Host", "ignored"}};
    auto post = c.Do({.method = Method::kPost, .url = base + "/created?a=1", .headers = extra, .body = "hello"});
    ASSERT_TRUE(post.has_value()) << post.error().message();
    EXPECT_EQ(post->status, 201);
    EXPECT_EQ(post->reason, "Created");
    EXPECT_EQ(post->body, "POST /created?a=1 hello");
    EXPECT_EQ(post->Header("x-seen-token"), "t1");
    EXPECT_EQ(post->Header("X-Seen-Host"), base.substr(7)) << "Host comes from the URL";
    EXPECT_EQ(post->Header("content-length"), "23");
    auto get = c.Do({.url = base + "/g"});
    ASSERT_TRUE(get.has_value()) << get.error().message();
    EXPECT_EQ(get->body, "GET /g? ");
    auto head = c.Do({.method = Method::kHead, .url = base + "/h"});
    ASSERT_TRUE(head.has_value()) << head.error().message();
    EXPECT_EQ(head->status, 200);
    EXPECT_EQ(head->body, "");
  });
}

TEST_P(ClientTest, ChunkedResponseBodiesAreJoined) {
  WithServer({}, [](net::Stack& st, std::string base, Server&) {
    Client c(&st);
    auto r = c.Do({.url = base + "/chunked"});
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->Header("transfer-encoding"), "chunked");
    EXPECT_EQ(r->body, "one,two,three");
    EXPECT_EQ(c.idle_connections(), 0u) << "the server closes after a streamed response";
  });
}

TEST_P(ClientTest, KeepAliveReusesOneConnectionAndRetriesAStaleOne) {
  ServerOptions o;
  o.idle_timeout = 100ms;
  o.drain_check = 20ms;
  WithServer(o, [](net::Stack& st, std::string base, Server& srv) {
    Client c(&st);
    for (int i = 0; i < 3; ++i) {
      auto r = c.Do({.url = base + "/k"});
      ASSERT_TRUE(r.has_value()) << r.error().message();
    }
    EXPECT_EQ(srv.stats().connections_accepted, 1u);
    EXPECT_EQ(c.idle_connections(), 1u);
    sched::SleepFor(400ms);  // the server closes the idle connection
    auto again = c.Do({.method = Method::kPost, .url = base + "/k", .body = "x"});
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(again->body, "POST /k? x");
    EXPECT_EQ(srv.stats().connections_accepted, 2u);
    Client closer(&st, {.keep_alive = false});
    ASSERT_TRUE(closer.Do({.url = base + "/k"}).has_value());
    EXPECT_EQ(closer.idle_connections(), 0u);
  });
}

// A body that runs until the server closes: no Content-Length, no chunks.
TEST_P(ClientTest, CloseDelimitedBody) {
  sched::testing::RunOnCores(2, [&] {
    auto stack = net::CreateStack(GetParam());
    ASSERT_TRUE(stack.has_value());
    auto l = (*stack)->Listen(*Endpoint::Parse("127.0.0.1:0"));
    ASSERT_TRUE(l.has_value());
    auto server = *sched::Spawn([&] {
      auto conn = l->Accept(Clock::now() + 5s);
      ASSERT_TRUE(conn.has_value());
      char buf[1024];
      (void)conn->Read(std::as_writable_bytes(std::span(buf)), Clock::now() + 2s);
      const std::string_view out = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end";
      (void)conn->Write(std::as_bytes(std::span(out.data(), out.size())));
      conn->Close();
    });
    {
      Client c(stack->get());
      auto r = c.Do({.url = "http://" + l->local_endpoint().ToString() + "/"});
      ASSERT_TRUE(r.has_value()) << r.error().message();
      EXPECT_EQ(r->body, "until the end");
      EXPECT_EQ(c.idle_connections(), 0u);
    }
    server.Join();
    *l = net::TcpListener();  // closed and released before its stack goes
    stack->reset();
  });
}

TEST_P(ClientTest, ErrorsSayWhatFailed) {
  ServerOptions o;
  WithServer(o, [](net::Stack& st, std::string base, Server&) {
    Client small(&st, {.max_response_body_bytes = 1024});
    auto big = small.Do({.url = base + "/big"});
    ASSERT_FALSE(big.has_value());
    EXPECT_EQ(big.error().code(), ErrorCode::kResourceExhausted) << big.error().message();
    EXPECT_NE(big.error().message().find("http client: GET " + base + "/big: "), std::string::npos)
        << big.error().message();
    Client c(&st);
    auto dns = c.Do({.url = "http://example.com/"});
    ASSERT_FALSE(dns.has_value());
    EXPECT_EQ(dns.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(dns.error().message().find("no DNS resolver"), std::string::npos) << dns.error().message();
    const Header framing[] = {{"Content-Length", "3"}};
    auto hdr = c.Do({.url = base + "/", .headers = framing});
    ASSERT_FALSE(hdr.has_value());
    EXPECT_NE(hdr.error().message().find("Content-Length"), std::string::npos) << hdr.error().message();
    EXPECT_FALSE(c.Do({.method = Method::kOther, .url = base + "/"}).has_value());
    // Nothing listens on the server's port once a listener there is closed.
    auto l = st.Listen(*Endpoint::Parse("127.0.0.1:0"));
    ASSERT_TRUE(l.has_value());
    const std::string dead = "http://" + l->local_endpoint().ToString() + "/";
    l->Close();
    auto refused = c.Do({.url = dead, .deadline = Clock::now() + 2s});
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message().find("connecting to"), std::string::npos) << refused.error().message();
  });
}

// The deadline ends the call with kTimedOut, and the wait parks only the caller: another
// uthread on the same (single) core keeps running meanwhile.
TEST_P(ClientTest, DeadlineEndsTheCallWithoutBlockingTheCore) {
  sched::testing::RunOnCores(1, [&] {
    auto stack = net::CreateStack(GetParam());
    ASSERT_TRUE(stack.has_value());
    auto server = Server::Start(**stack, *Endpoint::Parse("127.0.0.1:0"), Handler);
    ASSERT_TRUE(server.has_value());
    const std::string base = "http://" + (*server)->local_endpoint().ToString();
    std::atomic<bool> done{false};
    std::atomic<int> ticks{0};
    auto ticker = *sched::Spawn([&] {
      while (!done.load()) {
        ticks.fetch_add(1);
        sched::SleepFor(5ms);
      }
    });
    {
      Client c(stack->get());
      const auto t0 = Clock::now();
      auto r = c.Do({.url = base + "/sleep", .deadline = Clock::now() + 100ms});
      const auto took = Clock::now() - t0;
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().code(), ErrorCode::kTimedOut) << r.error().message();
      EXPECT_NE(r.error().message().find("no complete response within 100 ms"), std::string::npos)
          << r.error().message();
      EXPECT_GE(took, 90ms);
      EXPECT_LT(took, 400ms);
      EXPECT_GE(ticks.load(), 5) << "the core ran the other uthread while the call waited";
      auto ok = c.Do({.url = base + "/sleep", .deadline = Clock::now() + 3s});
      ASSERT_TRUE(ok.has_value()) << ok.error().message();
      EXPECT_EQ(ok->status, 200);
    }
    done = true;
    ticker.Join();
    (*server)->Shutdown(1s);
    server->reset();
    stack->reset();
  });
}

INSTANTIATE_TEST_SUITE_P(Stacks, ClientTest, ::testing::Values("loopback", "kernel"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace junction::http
