// socket_test.cc — the socket API's behaviour, the same test bodies against every backend:
// echo, half-close, deadlines, refused, address in use, peer close, many connections, UDP.
#include "junction/net/socket.h"

#include <gtest/gtest.h>

#include <time.h>

#include <vector>

#include "junction/net/net_error.h"
#include "junction/net/net_test_util.h"
#include "junction/net/stack.h"

namespace junction::net {
namespace {

using namespace testing;  // junction::net::testing
using ::testing::TestWithParam;
using ::testing::Values;

class SocketTest : public TestWithParam<std::string> {
 protected:
  void Run(std::function<void(Stack&)> body, int cores = 2) {
    RunWithStack(GetParam(), cores, std::move(body));
  }
  // Connections held open at once in ManyConcurrentConnections.
  int many() const { return GetParam() == "loopback" ? 1000 : 200; }
};

// A listener with one connection accepted on it. Use as
// ASSERT_NO_FATAL_FAILURE(OpenPair(stack, p)).
struct ConnectedPair {
  TcpListener listener;
  TcpConn client, server;
};
void OpenPair(Stack& stack, ConnectedPair& p) {
  auto l = stack.Listen(LocalAny());
  ASSERT_TRUE(l.has_value()) << l.error().message();
  auto c = stack.Connect(l->local_endpoint(), In(10s));
  ASSERT_TRUE(c.has_value()) << c.error().message();
  auto s = l->Accept(In(10s));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  p.listener = std::move(*l);
  p.client = std::move(*c);
  p.server = std::move(*s);
}

std::string ReadAll(TcpConn& c, Deadline deadline) {
  std::string out;
  std::vector<std::byte> buf(16 * 1024);
  for (;;) {
    auto n = c.Read(buf, deadline);
    if (!n) {
      ADD_FAILURE() << n.error().message();
      return out;
    }
    if (*n == 0) return out;
    out.append(reinterpret_cast<const char*>(buf.data()), *n);
  }
}

TEST_P(SocketTest, Echo) {
  Run([](Stack& stack) {
    EchoServer server(stack);
    auto c = stack.Connect(server.endpoint(), In(10s));
    ASSERT_TRUE(c.has_value()) << c.error().message();
    EXPECT_EQ(c->remote_endpoint(), server.endpoint());
    EXPECT_EQ(c->local_endpoint().addr, Ipv4Addr::Loopback());
    EXPECT_NE(c->local_endpoint().port, 0);
    ASSERT_TRUE(c->Write(AsBytes("hello, uthreads"), In(10s)).has_value());
    std::string got(15, '\0');
    ASSERT_TRUE(c->ReadExactly(std::as_writable_bytes(std::span(got)), In(10s)).has_value());
    EXPECT_EQ(got, "hello, uthreads");
    ASSERT_TRUE(c->ShutdownWrite().has_value());
    EXPECT_EQ(ReadAll(*c, In(10s)), "");  // the server ended its side after ours
    c->Close();
    EXPECT_FALSE(c->is_open());
    auto after = c->Write(AsBytes("x"));
    ASSERT_FALSE(after.has_value());
    EXPECT_TRUE(IsClosed(after.error()));
    server.Stop();
    EXPECT_EQ(server.handled(), 1u);

    const NetCounters total = stack.counters().Total();
    EXPECT_EQ(total.conns_accepted, 1u);
    EXPECT_EQ(total.conns_connected, 1u);
    EXPECT_EQ(total.bytes_out, 30u);  // 15 by the client, 15 echoed
    EXPECT_EQ(total.bytes_in, 30u);
  });
}

TEST_P(SocketTest, HalfCloseThenReadTheRest) {
  Run([](Stack& stack) {
    auto l = stack.Listen(LocalAny());
    ASSERT_TRUE(l.has_value()) << l.error().message();
    auto server = sched::Spawn([&] {
      auto c = l->Accept(In(10s));
      ASSERT_TRUE(c.has_value()) << c.error().message();
      const std::string request = ReadAll(*c, In(10s));  // ends at the client's FIN
      const std::string reply = "got " + std::to_string(request.size()) + " bytes";
      ASSERT_TRUE(c->Write(AsBytes(reply), In(10s)).has_value());
      c->Close();
    });
    auto c = stack.Connect(l->local_endpoint(), In(10s));
    ASSERT_TRUE(c.has_value()) << c.error().message();
    const std::string request(300 * 1024, 'q');
    ASSERT_TRUE(c->Write(AsBytes(request), In(10s)).has_value());
    ASSERT_TRUE(c->ShutdownWrite().has_value());
    ASSERT_TRUE(c->ShutdownWrite().has_value());  // idempotent
    auto w = c->Write(AsBytes("late"));
    ASSERT_FALSE(w.has_value());
    EXPECT_TRUE(IsClosed(w.error())) << w.error().message();
    EXPECT_EQ(ReadAll(*c, In(10s)), "got 307200 bytes");
    server->Join();
  });
}

TEST_P(SocketTest, AcceptDeadline) {
  Run([](Stack& stack) {
    auto l = stack.Listen(LocalAny());
    ASSERT_TRUE(l.has_value()) << l.error().message();
    const auto t0 = Clock::now();
    auto c = l->Accept(t0 + 30ms);
    const auto waited = Clock::now() - t0;
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code(), ErrorCode::kTimedOut) << c.error().message();
    EXPECT_GE(waited, 30ms);
    EXPECT_LT(waited, 2s);
    EXPECT_EQ(stack.counters().Total().timeouts, 1u);
  });
}

TEST_P(SocketTest, ReadDeadlineLeavesTheConnectionUsable) {
  Run([](Stack& stack) {
    ConnectedPair p;
    ASSERT_NO_FATAL_FAILURE(OpenPair(stack, p));
    TcpConn* c = &p.client;
    TcpConn* s = &p.server;
    std::byte buf[16];
    const auto t0 = Clock::now();
    auto r = c->Read(buf, t0 + 30ms);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(IsTimedOut(r.error())) << r.error().message();
    EXPECT_GE(Clock::now() - t0, 30ms);
    EXPECT_LT(Clock::now() - t0, 2s);
    ASSERT_TRUE(s->Write(AsBytes("late"), In(10s)).has_value());
    auto n = c->Read(buf, In(10s));
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), *n), "late");
  });
}

TEST_P(SocketTest, ConnectToAClosedPortIsRefused) {
  Run([](Stack& stack) {
    auto l = stack.Listen(LocalAny());
    ASSERT_TRUE(l.has_value()) << l.error().message();
    const Endpoint ep = l->local_endpoint();
    l->Close();
    auto c = stack.Connect(ep, In(10s));
    ASSERT_FALSE(c.has_value());
    EXPECT_TRUE(IsConnectionRefused(c.error())) << c.error().message();
    EXPECT_NE(c.error().message().find(ep.ToString()), std::string::npos) << c.error().message();
    EXPECT_EQ(stack.counters().Total().errors, 1u);
  });
}

TEST_P(SocketTest, SecondListenerOnAPortIsAddressInUse) {
  Run([](Stack& stack) {
    auto l = stack.Listen(LocalAny());
    ASSERT_TRUE(l.has_value()) << l.error().message();
    auto again = stack.Listen(l->local_endpoint());
    ASSERT_FALSE(again.has_value());
    EXPECT_TRUE(IsAddressInUse(again.error())) << again.error().message();
    EXPECT_EQ(again.error().code(), ErrorCode::kAlreadyExists);
    auto any = stack.Listen(Endpoint{Ipv4Addr::Any(), l->local_endpoint().port});
    ASSERT_FALSE(any.has_value());
    EXPECT_TRUE(IsAddressInUse(any.error())) << any.error().message();
    // Once closed, the port can be listened on again.
    const Endpoint ep = l->local_endpoint();
    l->Close();
    auto reuse = stack.Listen(ep);
    EXPECT_TRUE(reuse.has_value()) << reuse.error().message();
  });
}

TEST_P(SocketTest, ListenerCloseWakesAParkedAccept) {
  Run([](Stack& stack) {
    auto l = stack.Listen(LocalAny());
    ASSERT_TRUE(l.has_value()) << l.error().message();
    auto acceptor = sched::Spawn([&] {
      auto c = l->Accept(In(10s));
      ASSERT_FALSE(c.has_value());
      EXPECT_TRUE(IsClosed(c.error())) << c.error().message();
    });
    sched::SleepFor(20ms);
    const auto t0 = Clock::now();
    l->Close();
    acceptor->Join();
    EXPECT_LT(Clock::now() - t0, 2s);
  });
}

TEST_P(SocketTest, PeerCloseWithUnreadDataResetsTheWriter) {
  Run([](Stack& stack) {
    ConnectedPair p;
    ASSERT_NO_FATAL_FAILURE(OpenPair(stack, p));
    TcpConn* c = &p.client;
    TcpConn* s = &p.server;
    auto closer = sched::Spawn([&] {
      std::byte buf[10];
      ASSERT_TRUE(s->ReadExactly(buf, In(10s)).has_value());
      s->Close();  // leaves the rest unread: the peer gets a reset
    });
    // More than any socket buffer: the write must fail, not hang.
    std::vector<std::byte> big(32 << 20, std::byte{7});
    auto w = c->Write(big, In(20s));
    closer->Join();
    ASSERT_FALSE(w.has_value());
    EXPECT_TRUE(IsConnectionReset(w.error())) << w.error().message();
    // Reading after the reset fails too, or sees the end; it never hangs.
    std::byte buf[16];
    auto r = c->Read(buf, In(10s));
    if (r.has_value()) {
      EXPECT_EQ(*r, 0u);
    } else {
      EXPECT_TRUE(IsConnectionReset(r.error())) << r.error().message();
    }
  });
}

TEST_P(SocketTest, PeerCloseMidResponseGivesTheDataThenEndOfStream) {
  Run([](Stack& stack) {
    auto l = stack.Listen(LocalAny());
    ASSERT_TRUE(l.has_value()) << l.error().message();
    const std::string partial(1 << 20, 'p');
    auto server = sched::Spawn([&] {
      auto s = l->Accept(In(10s));
      ASSERT_TRUE(s.has_value()) << s.error().message();
      ASSERT_TRUE(s->Write(AsBytes(partial), In(10s)).has_value());
      s->Close();  // nothing unread: an orderly end after the bytes
    });
    auto c = stack.Connect(l->local_endpoint(), In(10s));
    ASSERT_TRUE(c.has_value()) << c.error().message();
    EXPECT_EQ(ReadAll(*c, In(10s)).size(), partial.size());
    server->Join();
    // Writing to the closed peer fails (broken pipe / reset) within a few tries.
    bool failed = false;
    for (int i = 0; i < 100 && !failed; ++i) {
      auto w = c->Write(AsBytes("are you there?"), In(10s));
      if (!w) {
        EXPECT_TRUE(IsConnectionReset(w.error())) << w.error().message();
        failed = true;
      } else {
        sched::SleepFor(1ms);
      }
    }
    EXPECT_TRUE(failed);
  });
}

TEST_P(SocketTest, ManyConcurrentConnections) {
  const int n = many();
  Run([n](Stack& stack) {
    EchoServer server(stack, 1024);
    std::vector<TcpConn> conns(n);
    for (int i = 0; i < n; ++i) {
      auto c = stack.Connect(server.endpoint(), In(20s));
      ASSERT_TRUE(c.has_value()) << "connection " << i << ": " << c.error().message();
      conns[i] = std::move(*c);
    }
    // All open at once; each one round-trips its own message, from many uthreads.
    sched::WaitGroup wg;
    std::atomic<int> ok{0};
    for (int i = 0; i < n; ++i) {
      wg.Add(1);
      ASSERT_TRUE(sched::SpawnDetached([&, i] {
                    const std::string msg = "conn-" + std::to_string(i);
                    std::string got(msg.size(), '\0');
                    if (conns[i].Write(AsBytes(msg), In(20s)) &&
                        conns[i].ReadExactly(std::as_writable_bytes(std::span(got)), In(20s)) &&
                        got == msg) {
                      ok.fetch_add(1);
                    }
                    conns[i].Close();
                    wg.Done();
                  }).has_value());
    }
    ASSERT_TRUE(wg.WaitUntil(In(60s)));
    EXPECT_EQ(ok.load(), n);
    server.Stop();
    EXPECT_EQ(stack.counters().Total().conns_accepted, static_cast<std::uint64_t>(n));
    EXPECT_EQ(stack.counters().Total().conns_connected, static_cast<std::uint64_t>(n));
  });
}

// Parked readers and acceptors cost no CPU: the cores block (in epoll, for the kernel
// backend) instead of spinning. The runtime's own idle spin and timer spin stay far below
// the bound.
TEST_P(SocketTest, ParkedSocketsDoNotSpin) {
  Run([](Stack& stack) {
    ConnectedPair p;
    ASSERT_NO_FATAL_FAILURE(OpenPair(stack, p));
    TcpConn* c = &p.client;
    auto cpu_now = [] {
      timespec ts{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    };
    const auto cpu0 = cpu_now();
    const auto wall0 = Clock::now();
    auto reader = sched::Spawn([&] {
      std::byte buf[8];
      EXPECT_TRUE(IsTimedOut(c->Read(buf, In(300ms)).error()));
    });
    EXPECT_TRUE(IsTimedOut(p.listener.Accept(In(300ms)).error()));
    reader->Join();
    const auto wall = Clock::now() - wall0;
    const auto cpu = cpu_now() - cpu0;
    // Two cores spinning would burn 2x the wall time; parked ones burn almost nothing.
    EXPECT_LT(cpu, wall / 4) << "cpu " << std::chrono::duration<double>(cpu).count()
                             << " s over " << std::chrono::duration<double>(wall).count() << " s";
  });
}

TEST_P(SocketTest, UdpSendReceiveAndDeadline) {
  Run([](Stack& stack) {
    auto a = stack.BindUdp(LocalAny());
    auto b = stack.BindUdp(LocalAny());
    ASSERT_TRUE(a.has_value()) << a.error().message();
    ASSERT_TRUE(b.has_value()) << b.error().message();
    ASSERT_NE(a->local_endpoint().port, 0);
    ASSERT_TRUE(a->SendTo(AsBytes("ping"), b->local_endpoint(), In(10s)).has_value());
    std::byte buf[64];
    auto d = b->RecvFrom(buf, In(10s));
    ASSERT_TRUE(d.has_value()) << d.error().message();
    EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), d->size), "ping");
    EXPECT_EQ(d->from, a->local_endpoint());
    EXPECT_FALSE(d->truncated);
    // A datagram bigger than the buffer is cut and says so.
    ASSERT_TRUE(b->SendTo(AsBytes("0123456789"), a->local_endpoint(), In(10s)).has_value());
    std::byte small[4];
    auto t = a->RecvFrom(small, In(10s));
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(t->size, 4u);
    EXPECT_TRUE(t->truncated);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(small), 4), "0123");
    // Nothing more: the deadline passes.
    auto none = b->RecvFrom(buf, In(30ms));
    ASSERT_FALSE(none.has_value());
    EXPECT_TRUE(IsTimedOut(none.error())) << none.error().message();
    // The same port twice is in use.
    auto dup = stack.BindUdp(a->local_endpoint());
    ASSERT_FALSE(dup.has_value());
    EXPECT_TRUE(IsAddressInUse(dup.error())) << dup.error().message();
    auto too_big = a->SendTo(std::vector<std::byte>(kMaxUdpPayload + 1), b->local_endpoint());
    ASSERT_FALSE(too_big.has_value());
    EXPECT_EQ(too_big.error().code(), ErrorCode::kInvalidArgument);
    const NetCounters total = stack.counters().Total();
    EXPECT_EQ(total.datagrams_out, 2u);
    EXPECT_EQ(total.datagrams_in, 2u);
  });
}

TEST_P(SocketTest, EmptyAndClosedHandlesFail) {
  Run([](Stack& stack) {
    TcpConn none;
    std::byte buf[4];
    auto r = none.Read(buf);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(IsClosed(r.error()));
    TcpListener no_listener;
    EXPECT_TRUE(IsClosed(no_listener.Accept().error()));
    auto bad = stack.Connect(Endpoint{Ipv4Addr::Loopback(), 0}, In(1s));
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
    EchoServer server(stack);
    auto c = stack.Connect(server.endpoint(), In(10s));
    ASSERT_TRUE(c.has_value()) << c.error().message();
    auto empty = c->Read(std::span<std::byte>());
    ASSERT_FALSE(empty.has_value());
    EXPECT_EQ(empty.error().code(), ErrorCode::kInvalidArgument);
  });
}

// Read skips its recv after a short one until a readiness edge comes (kernel_tcp.cc). Two
// cases where that must not lose anything: data and FIN that both arrived before one recv
// (their edges came before it), and data that arrives after a short recv.
TEST_P(SocketTest, ShortReadThenFinOrMoreDataIsSeen) {
  Run([](Stack& stack) {
    ConnectedPair p;
    ASSERT_NO_FATAL_FAILURE(OpenPair(stack, p));
    TcpConn* c = &p.client;
    TcpConn* s = &p.server;
    std::byte buf[64];
    // More data after a short read.
    ASSERT_TRUE(s->Write(AsBytes("one"), In(10s)).has_value());
    auto n = c->Read(buf, In(10s));
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 3u);
    ASSERT_TRUE(s->Write(AsBytes("two!"), In(10s)).has_value());
    n = c->Read(buf, In(10s));
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 4u);
    // Data and FIN queued before the reader looks: one short read, then end of stream.
    ASSERT_TRUE(s->Write(AsBytes("last"), In(10s)).has_value());
    ASSERT_TRUE(s->ShutdownWrite().has_value());
    sched::SleepFor(20ms);  // both are in the receive queue and their edges harvested
    std::size_t got = 0;
    for (;;) {
      n = c->Read(buf, In(2s));
      ASSERT_TRUE(n.has_value()) << "end of stream not seen after a short read: "
                                 << n.error().message();
      if (*n == 0) break;
      got += *n;
    }
    EXPECT_EQ(got, 4u);
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, SocketTest, Values("loopback", "kernel"),
                         [](const auto& info) { return info.param; });

// Loopback only: the kernel gives no portable way to stall a handshake on 127.0.0.1.
TEST(LoopbackSocketTest, ConnectTimesOutWhileTheBacklogIsFull) {
  RunWithStack("loopback", 1, [](Stack& stack) {
    auto l = stack.Listen(LocalAny(), ListenOptions{.backlog = 1});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    auto first = stack.Connect(l->local_endpoint(), In(1s));
    ASSERT_TRUE(first.has_value()) << first.error().message();
    auto second = stack.Connect(l->local_endpoint(), In(30ms));
    ASSERT_FALSE(second.has_value());
    EXPECT_TRUE(IsTimedOut(second.error())) << second.error().message();
    // Closing the listener resets the queued, never-accepted connection.
    l->Close();
    std::byte buf[4];
    auto r = first->Read(buf, In(1s));
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(IsConnectionReset(r.error())) << r.error().message();
  });
}

// Kernel only: the loopback pipes queue any number of readers; the kernel backend's
// readiness waiter holds one per direction and says so.
TEST(KernelSocketTest, SecondConcurrentReaderIsRefused) {
  RunWithStack("kernel", 2, [](Stack& stack) {
    ConnectedPair p;
    ASSERT_NO_FATAL_FAILURE(OpenPair(stack, p));
    TcpConn* c = &p.client;
    TcpConn* s = &p.server;
    auto first = sched::Spawn([&] {
      std::byte buf[8];
      auto n = c->Read(buf, In(10s));
      EXPECT_TRUE(n.has_value()) << n.error().message();
    });
    sched::SleepFor(20ms);  // the first reader is parked by now
    std::byte buf[8];
    auto second = c->Read(buf, In(10s));
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error().code(), ErrorCode::kInvalidArgument) << second.error().message();
    ASSERT_TRUE(s->Write(AsBytes("wake"), In(10s)).has_value());
    first->Join();
  });
}

}  // namespace
}  // namespace junction::net
