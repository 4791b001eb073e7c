// link_test.cc — two TCP services back to back over an in-memory link under the real runtime:
// echo transfers of 1 KB to 16 MB, clean and with seeded loss, reordering, duplication and
// delay. Every byte must come back (SHA-256), no connection may hang, and the retransmission
// counters must agree with what the link did.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "junction/net/net_error.h"
#include "junction/net/net_test_util.h"
#include "junction/net/sha256.h"
#include "junction/net/tcp/mem_link.h"
#include "junction/net/tcp/tcp_socket.h"
#include "junction/sched/sync.h"

namespace junction::net::tcp {
namespace {

using namespace std::chrono_literals;
using net::testing::FillPattern;
using net::testing::In;
using tcp::testing::LinkFaults;
using tcp::testing::MemLink;

const Ipv4Addr kA(10, 0, 0, 1);
const Ipv4Addr kB(10, 0, 0, 2);

struct Side {
  Sha256::Digest digest{};
  std::uint64_t bytes = 0;
  std::string error;
};

void SendStream(TcpConn& c, std::uint64_t seed, std::size_t total, Deadline deadline, Side* out) {
  std::vector<std::byte> chunk(32 * 1024);
  Sha256 h;
  std::uint64_t block = 0;
  std::uint64_t rng = seed * 2654435761u + 1;
  while (out->bytes < total) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    const std::size_t n = std::min<std::size_t>(total - out->bytes, 1 + rng % chunk.size());
    auto piece = std::span(chunk).first(n);
    FillPattern(seed, block++, piece);
    h.Update(piece);
    if (auto w = c.Write(piece, deadline); !w) {
      out->error = w.error().message();
      return;
    }
    out->bytes += n;
  }
  if (auto s = c.ShutdownWrite(); !s) out->error = s.error().message();
  out->digest = h.Finish();
}

void ReceiveStream(TcpConn& c, Deadline deadline, Side* out) {
  std::vector<std::byte> buf(24 * 1024);
  Sha256 h;
  for (;;) {
    auto n = c.Read(buf, deadline);
    if (!n) {
      out->error = n.error().message();
      return;
    }
    if (*n == 0) break;
    h.Update(std::span(buf).first(*n));
    out->bytes += *n;
  }
  out->digest = h.Finish();
}

// Runs body with two services (A at 10.0.0.1, B at 10.0.0.2) on a 2-core runtime.
void WithPair(LinkFaults faults, EngineOptions opts,
              const std::function<void(TcpService&, TcpService&, MemLink&, NetCounterSet&,
                                       NetCounterSet&)>& body) {
  sched::testing::RunOnCores(2, [&] {
    NetCounterSet ca(2), cb(2);
    MemLink link(2, faults);
    EngineOptions oa = opts, ob = opts;
    oa.local_addr = kA;
    ob.local_addr = kB;
    auto a = TcpService::Create(oa, link.tx(0), &ca);
    auto b = TcpService::Create(ob, link.tx(1), &cb);
    ASSERT_TRUE(a && b);
    link.Attach(0, a->get(), kA);
    link.Attach(1, b->get(), kB);
    link.Start();
    body(**a, **b, link, ca, cb);
    link.Stop();
  });
}

// An echo server on `svc`: every connection's bytes come back, then its end of stream.
class Echo {
 public:
  explicit Echo(TcpService& svc) {
    auto l = svc.Listen(Endpoint{Ipv4Addr::Any(), 7}, ListenOptions{});
    EXPECT_TRUE(l.has_value()) << l.error().message();
    listener_ = std::move(*l);
    auto h = sched::Spawn([this] { Loop(); });
    if (h) acceptor_ = std::move(*h);
  }
  void Stop() {
    listener_.Close();
    acceptor_.Join();
    done_.Wait();
  }

 private:
  void Loop() {
    for (;;) {
      auto c = listener_.Accept();
      if (!c) return;
      done_.Add(1);
      (void)sched::SpawnDetached([this, conn = std::move(*c)]() mutable {
        std::vector<std::byte> buf(16 * 1024);
        for (;;) {
          auto n = conn.Read(buf, In(60s));
          if (!n || *n == 0) break;
          if (!conn.Write(std::span(buf).first(*n), In(60s))) break;
        }
        (void)conn.ShutdownWrite();
        // Wait for the peer to finish reading (its FIN came already), then close.
        conn.Close();
        done_.Done();
      });
    }
  }
  TcpListener listener_;
  sched::JoinHandle acceptor_;
  sched::WaitGroup done_;
};

// Echoes `bytes` over each of `conns` connections from A to B; expects every byte back.
void EchoTransfer(TcpService& a, TcpService& b, std::size_t bytes, int conns) {
  Echo echo(b);
  const Deadline deadline = In(90s);
  std::vector<TcpConn> cs(static_cast<std::size_t>(conns));
  for (int i = 0; i < conns; ++i) {
    auto c = a.Connect(Endpoint{kB, 7}, In(30s));
    ASSERT_TRUE(c.has_value()) << c.error().message();
    cs[static_cast<std::size_t>(i)] = std::move(*c);
  }
  std::vector<Side> sent(cs.size()), got(cs.size());
  std::vector<sched::JoinHandle> hs;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    hs.push_back(*sched::Spawn([&, i] { SendStream(cs[i], i + 1, bytes, deadline, &sent[i]); }));
    hs.push_back(*sched::Spawn([&, i] { ReceiveStream(cs[i], deadline, &got[i]); }));
  }
  for (auto& h : hs) h.Join();
  for (std::size_t i = 0; i < cs.size(); ++i) {
    EXPECT_EQ(sent[i].error, "") << "conn " << i;
    EXPECT_EQ(got[i].error, "") << "conn " << i;
    EXPECT_EQ(sent[i].bytes, bytes);
    EXPECT_EQ(got[i].bytes, bytes) << "conn " << i;
    EXPECT_EQ(Sha256::Hex(got[i].digest), Sha256::Hex(sent[i].digest)) << "conn " << i;
    cs[i].Close();
  }
  echo.Stop();
}

TcpCounterSnapshot Both(TcpService& a, TcpService& b) {
  TcpCounterSnapshot s = a.counters();
  s += b.counters();
  return s;
}

using Params = std::tuple<std::size_t, int>;  // bytes per connection, connections

class CleanLinkTest : public ::testing::TestWithParam<Params> {};

TEST_P(CleanLinkTest, EchoIntactWithoutRetransmissions) {
  const auto [bytes, conns] = GetParam();
  WithPair(LinkFaults{}, EngineOptions{}, [&](TcpService& a, TcpService& b, MemLink& link, NetCounterSet& ca, NetCounterSet& cb) {
    EchoTransfer(a, b, bytes, conns);
    const TcpCounterSnapshot s = Both(a, b);
    EXPECT_EQ(link.stats().dropped.load(), 0u);
    EXPECT_EQ(s[TcpCounter::kDropChecksum], 0u);
    EXPECT_EQ(s[TcpCounter::kDropMalformed], 0u);
    EXPECT_EQ(s[TcpCounter::kConnsOpened], 2u * static_cast<std::uint64_t>(conns));
    EXPECT_EQ(s[TcpCounter::kConnsAborted], 0u);
    std::printf("clean %zu B x %d: retransmits %llu fast %llu rto %llu probes %llu oow %llu nobuf %llu\n", bytes, conns,
                (unsigned long long)s[TcpCounter::kRetransmits], (unsigned long long)s[TcpCounter::kFastRetransmits],
                (unsigned long long)s[TcpCounter::kRtoTimeouts], (unsigned long long)s[TcpCounter::kZeroWindowProbes],
                (unsigned long long)s[TcpCounter::kDropOutOfWindow], (unsigned long long)s[TcpCounter::kTxNoBuffer]);
    // Nothing lost, so nothing resent (a pool-exhausted Alloc would count as a loss).
    if (s[TcpCounter::kTxNoBuffer] == 0) {
      EXPECT_EQ(s[TcpCounter::kRetransmits], 0u);
      EXPECT_EQ(s[TcpCounter::kFastRetransmits], 0u);
      EXPECT_EQ(s[TcpCounter::kDropOutOfWindow], 0u);  // nobody sends outside the other's window
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Sizes, CleanLinkTest,
                         ::testing::Values(Params{1024, 1}, Params{1 << 20, 1}, Params{16 << 20, 1},
                                           Params{256 << 10, 16}));

class LossyLinkTest : public ::testing::TestWithParam<Params> {};

TEST_P(LossyLinkTest, EchoIntactUnderDropReorderDuplicateAndDelay) {
  const auto [bytes, conns] = GetParam();
  LinkFaults f;
  f.drop = 0.02;
  f.reorder = 0.05;
  f.duplicate = 0.01;
  f.delay_ns = 50'000;
  f.reorder_ns = 200'000;
  f.seed = 7 + bytes + static_cast<std::size_t>(conns);
  EngineOptions o;
  o.rto_min_ns = 5'000'000;  // a fast link: a short minimum keeps the test short
  o.rto_initial_ns = 100'000'000;
  o.delayed_ack_ns = 1'000'000;  // below the short RTO, as 20 ms is below Linux's 200 ms
  WithPair(f, o, [&](TcpService& a, TcpService& b, MemLink& link, NetCounterSet& ca, NetCounterSet& cb) {
    EchoTransfer(a, b, bytes, conns);
    const TcpCounterSnapshot s = Both(a, b);
    const auto& ls = link.stats();
    if (bytes >= (1u << 20)) {
      EXPECT_GT(ls.dropped.load(), 0u);
    }
    EXPECT_EQ(s[TcpCounter::kDropChecksum], 0u);
    EXPECT_EQ(s[TcpCounter::kConnsAborted], 0u);
    // Lost data is repaired only by retransmission: at least one per data loss episode,
    // and the kinds add up.
    if (ls.dropped_data.load() > 0) {
      EXPECT_GT(s[TcpCounter::kRetransmits], 0u);
    }
    EXPECT_GE(s[TcpCounter::kRetransmits],
              s[TcpCounter::kFastRetransmits] + s[TcpCounter::kPartialAckRetransmits]);
    // The stack's counters (counters.h) carry the same figure.
    EXPECT_EQ(ca.Total().tcp_retransmits + cb.Total().tcp_retransmits, s[TcpCounter::kRetransmits]);
    if (bytes >= (1u << 20)) {
      // Enough segments for losses inside a window: fast retransmit and NewReno partial ACKs.
      EXPECT_GT(s[TcpCounter::kFastRetransmits], 0u);
      EXPECT_GT(s[TcpCounter::kPartialAckRetransmits], 0u);
    }
    std::printf("lossy %zu B x %d: frames %llu dropped %llu (data %llu) dup %llu reordered %llu | "
                "retransmits %llu fast %llu partial %llu rto %llu challenge %llu oow %llu\n",
                bytes, conns, (unsigned long long)ls.frames.load(), (unsigned long long)ls.dropped.load(),
                (unsigned long long)ls.dropped_data.load(), (unsigned long long)ls.duplicated.load(),
                (unsigned long long)ls.reordered.load(), (unsigned long long)s[TcpCounter::kRetransmits],
                (unsigned long long)s[TcpCounter::kFastRetransmits],
                (unsigned long long)s[TcpCounter::kPartialAckRetransmits],
                (unsigned long long)s[TcpCounter::kRtoTimeouts],
                (unsigned long long)s[TcpCounter::kChallengeAcks],
                (unsigned long long)s[TcpCounter::kDropOutOfWindow]);
  });
}

INSTANTIATE_TEST_SUITE_P(Sizes, LossyLinkTest,
                         ::testing::Values(Params{1024, 1}, Params{1 << 20, 1}, Params{16 << 20, 1},
                                           Params{128 << 10, 16}));

TEST(LinkTest, ConnectToAClosedPortIsRefused) {
  WithPair(LinkFaults{}, EngineOptions{}, [&](TcpService& a, TcpService&, MemLink&, NetCounterSet&, NetCounterSet&) {
    auto c = a.Connect(Endpoint{kB, 9}, In(5s));
    ASSERT_FALSE(c.has_value());
    EXPECT_TRUE(net::IsConnectionRefused(c.error())) << c.error().message();
  });
}

TEST(LinkTest, ReadDeadlineIsHonoured) {
  WithPair(LinkFaults{}, EngineOptions{}, [&](TcpService& a, TcpService& b, MemLink&, NetCounterSet&, NetCounterSet&) {
    auto l = b.Listen(Endpoint{Ipv4Addr::Any(), 80}, ListenOptions{});
    ASSERT_TRUE(l.has_value());
    auto c = a.Connect(Endpoint{kB, 80}, In(5s));
    ASSERT_TRUE(c.has_value()) << c.error().message();
    auto s = l->Accept(In(5s));
    ASSERT_TRUE(s.has_value()) << s.error().message();
    std::byte buf[16];
    const auto t0 = Clock::now();
    auto r = c->Read(buf, In(30ms));
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(net::IsTimedOut(r.error()));
    EXPECT_GE(Clock::now() - t0, 30ms);
    auto acc = l->Accept(In(20ms));
    ASSERT_FALSE(acc.has_value());
    EXPECT_TRUE(net::IsTimedOut(acc.error()));
    c->Close();
    s->Close();
    l->Close();
  });
}

TEST(LinkTest, PeerResetIsSeenByTheReader) {
  WithPair(LinkFaults{}, EngineOptions{}, [&](TcpService& a, TcpService& b, MemLink&, NetCounterSet&, NetCounterSet&) {
    auto l = b.Listen(Endpoint{Ipv4Addr::Any(), 80}, ListenOptions{});
    ASSERT_TRUE(l.has_value());
    auto c = a.Connect(Endpoint{kB, 80}, In(5s));
    ASSERT_TRUE(c.has_value());
    auto s = l->Accept(In(5s));
    ASSERT_TRUE(s.has_value());
    const auto msg = net::testing::AsBytes("unread");
    ASSERT_TRUE(c->Write(msg, In(5s)).has_value());
    sched::SleepFor(20ms);
    s->Close();  // unread data: RST
    std::byte buf[16];
    auto r = c->Read(buf, In(5s));
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(net::IsConnectionReset(r.error())) << r.error().message();
    c->Close();
    l->Close();
  });
}

}  // namespace
}  // namespace junction::net::tcp
