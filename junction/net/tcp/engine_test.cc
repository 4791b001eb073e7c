// engine_test.cc — one engine against crafted segments: every state-machine edge, the
// RFC 5961 checks, drops by reason, Karn's rule, NewReno, delayed ACKs and window probes.
// Time is a fake clock; what the engine sends is captured and parsed.
#include "junction/net/tcp/engine.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <vector>

#include "junction/net/tcp/engine_test_clock.h"
#include "junction/net/tcp/segment.h"

namespace junction::net::tcp {
namespace {

using engine_test::FakeNow;
using engine_test::g_now;
using engine_test::kMs;
using engine_test::kPeer;
using engine_test::kUs;

// Captures what the engine sends, from a fixed set of buffers.
class CaptureTx final : public TcpTx {
 public:
  struct Sent {
    std::vector<std::byte> bytes;
    Segment seg;
  };
  std::optional<TxFrame> Alloc(Ipv4Addr src, Ipv4Addr dst, std::size_t len) override {
    if (refuse > 0) {  // a port whose TX side is full
      --refuse;
      return std::nullopt;
    }
    EXPECT_EQ(src, kUs);
    EXPECT_EQ(dst, kPeer);
    EXPECT_LE(len, 1480u);
    return TxFrame{std::span(buf_).first(len), nullptr};
  }
  void Send(TxFrame f, std::size_t len) override {
    Sent s;
    s.bytes.assign(f.tcp.begin(), f.tcp.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_TRUE(TcpChecksumOk(kUs, kPeer, s.bytes)) << "engine sent a bad checksum";
    sent.push_back(std::move(s));
    Sent& b = sent.back();
    EXPECT_EQ(ParseSegment(b.bytes, &b.seg), ParseError::kOk);
  }
  void Discard(TxFrame) override {}
  TxChecksum checksum_mode() const override { return TxChecksum::kSoftware; }
  std::uint16_t mtu() const override { return 1500; }

  // The oldest segment not yet looked at.
  Segment Pop() {
    EXPECT_FALSE(sent.empty()) << "the engine sent nothing";
    if (sent.empty()) return {};
    held_ = std::move(sent.front());
    sent.pop_front();
    held_.seg.payload = std::span(held_.bytes).subspan(held_.bytes.size() - held_.seg.payload.size());
    return held_.seg;
  }
  std::deque<Sent> sent;
  int refuse = 0;  // Alloc calls to refuse before giving buffers again

 private:
  std::byte buf_[1500];
  Sent held_;
};

struct Opts {
  std::uint16_t mss = 0;
  int wscale = -1;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_now = 1'000'000'000;
    EngineOptions o;
    o.local_addr = kUs;
    o.clock_ns = &FakeNow;
    o.iss_secret = 42;
    o.time_wait_ns = 1000 * kMs;
    o.rto_min_ns = 200 * kMs;
    o.send_buffer_bytes = 64 * 1024;
    o.recv_buffer_bytes = 64 * 1024;
    engine_ = std::make_unique<Engine>(o, &tx_);
    ASSERT_TRUE(engine_->Listen(Endpoint{kUs, 80}, backlog_, nullptr).has_value());
  }

  // Sends a crafted segment from the peer (port `from`) to our port `to`.
  void Deliver(std::uint16_t from, std::uint16_t to, std::uint32_t seq, std::uint32_t ack,
               std::uint8_t fl, std::uint16_t window, std::span<const std::byte> payload = {},
               Opts opts = {}, bool corrupt = false) {
    std::vector<std::byte> b(kHeaderBytes + 8 + payload.size());
    std::size_t olen = 0;
    if (opts.mss != 0) {
      b[20] = std::byte{2};
      b[21] = std::byte{4};
      Store16(&b[22], opts.mss);
      olen = 4;
    }
    if (opts.wscale >= 0) {
      b[20 + olen] = std::byte{1};
      b[21 + olen] = std::byte{3};
      b[22 + olen] = std::byte{3};
      b[23 + olen] = std::byte(static_cast<std::uint8_t>(opts.wscale));
      olen += 4;
    }
    WriteHeader(b.data(), from, to, seq, ack, fl, window, olen);
    if (!payload.empty()) std::memcpy(&b[20 + olen], payload.data(), payload.size());
    b.resize(20 + olen + payload.size());
    FixChecksum(b);
    if (corrupt) b.back() ^= std::byte{0x40};
    engine_->Input(RxSegment{kPeer, kUs, b, false});
  }
  static void FixChecksum(std::vector<std::byte>& b) {
    Store16(&b[16], 0);
    const auto ck = static_cast<std::uint16_t>(
        ~ChecksumFold(ChecksumAdd(PseudoHeaderSum(kPeer, kUs, b.size()), b)));
    std::memcpy(&b[16], &ck, 2);
  }
  std::uint64_t Count(TcpCounter c) const { return engine_->counters().Get(c); }

  // A passive open from peer port `port`; returns the accepted connection. The peer's ISS is
  // peer_iss_, ours is in our_iss_.
  Conn* Establish(std::uint16_t port = 40000, Opts opts = {1460, 7}) {
    Deliver(port, 80, peer_iss_, 0, flags::kSyn, 65535, {}, opts);
    Segment sa = tx_.Pop();
    EXPECT_EQ(sa.flags, flags::kSyn | flags::kAck);
    EXPECT_EQ(sa.ack, peer_iss_ + 1);
    our_iss_ = sa.seq;
    g_now += 10 * kMs;
    Deliver(port, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 1000);
    Conn* c = engine_->Accept(80);
    EXPECT_NE(c, nullptr);
    return c;
  }
  void Advance(std::int64_t d) {
    g_now += d;
    engine_->Advance(g_now);
  }

  int backlog_ = 4;
  CaptureTx tx_;
  std::unique_ptr<Engine> engine_;
  std::uint32_t peer_iss_ = 1000;
  std::uint32_t our_iss_ = 0;
};

std::vector<std::byte> Bytes(std::size_t n, std::uint8_t seed = 1) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<std::uint8_t>(seed + i * 7));
  return v;
}

TEST_F(EngineTest, PassiveOpenNegotiatesMssAndWindowScale) {
  Deliver(40000, 80, 1000, 0, flags::kSyn, 65535, {}, {1000, 7});
  Segment sa = tx_.Pop();
  EXPECT_EQ(sa.flags, flags::kSyn | flags::kAck);
  EXPECT_EQ(sa.ack, 1001u);
  EXPECT_EQ(sa.mss, 1460);
  EXPECT_GE(sa.wscale, 0);
  Deliver(40000, 80, 1001, sa.seq + 1, flags::kAck, 100);
  Conn* c = engine_->Accept(80);
  ASSERT_NE(c, nullptr);
  ConnInfo i = engine_->Info(c);
  EXPECT_EQ(i.state, TcpState::kEstablished);
  EXPECT_EQ(i.mss, 1000);
  EXPECT_EQ(i.snd_wscale, 7);
  EXPECT_EQ(i.snd_wnd, 100u << 7);  // scaled once synchronized
  EXPECT_EQ(Count(TcpCounter::kConnsOpened), 1u);
  engine_->Close(c);
}

TEST_F(EngineTest, NoWindowScaleWhenThePeerOffersNone) {
  Conn* c = Establish(40000, {1460, -1});
  ConnInfo i = engine_->Info(c);
  EXPECT_EQ(i.snd_wscale, 0);
  EXPECT_EQ(i.rcv_wscale, 0);
  EXPECT_EQ(i.snd_wnd, 1000u);
  engine_->Close(c);
}

TEST_F(EngineTest, SynFloodBeyondBacklogIsDroppedAndCounted) {
  for (int i = 0; i < 10; ++i) Deliver(static_cast<std::uint16_t>(30000 + i), 80, 5000, 0, flags::kSyn, 65535);
  EXPECT_EQ(tx_.sent.size(), 4u);  // SYN,ACK for the first `backlog` only
  EXPECT_EQ(Count(TcpCounter::kDropBacklog), 6u);
  EXPECT_EQ(engine_->num_conns(), 4u);
  // The handshakes that never finish give up after their SYN,ACK retransmissions.
  for (int i = 0; i < 200; ++i) Advance(1000 * kMs);
  EXPECT_EQ(engine_->num_conns(), 0u);
  // Room again: a new SYN is answered.
  tx_.sent.clear();
  Deliver(31000, 80, 5000, 0, flags::kSyn, 65535);
  EXPECT_EQ(tx_.Pop().flags, flags::kSyn | flags::kAck);
}

TEST_F(EngineTest, BadChecksumIsDropped) {
  Deliver(40000, 80, 1000, 0, flags::kSyn, 65535, {}, {}, /*corrupt=*/true);
  EXPECT_TRUE(tx_.sent.empty());
  EXPECT_EQ(Count(TcpCounter::kDropChecksum), 1u);
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, LyingDataOffsetAndTruncatedHeadersAreDropped) {
  auto send_raw = [&](std::vector<std::byte> b) {
    FixChecksum(b);
    engine_->Input(RxSegment{kPeer, kUs, b, false});
  };
  std::vector<std::byte> b(20);
  WriteHeader(b.data(), 40000, 80, 1, 0, flags::kSyn, 100, 0);
  b[12] = std::byte{0xF0};  // says 60 bytes of header, has 20
  send_raw(b);
  b[12] = std::byte{0x30};  // says 12 bytes: below the minimum
  send_raw(b);
  std::vector<std::byte> shorter(b.begin(), b.begin() + 12);  // truncated
  engine_->Input(RxSegment{kPeer, kUs, shorter, false});
  std::vector<std::byte> o(24);
  WriteHeader(o.data(), 40000, 80, 1, 0, flags::kSyn, 100, 4);
  o[20] = std::byte{2};
  o[21] = std::byte{9};  // MSS option longer than the header
  send_raw(o);
  o[21] = std::byte{0};  // option length 0
  send_raw(o);
  EXPECT_EQ(Count(TcpCounter::kDropMalformed), 5u);
  EXPECT_TRUE(tx_.sent.empty());
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, SegmentToAClosedPortIsAnsweredWithRst) {
  Deliver(40000, 81, 7000, 0, flags::kSyn, 65535);
  Segment r = tx_.Pop();
  EXPECT_EQ(r.flags, flags::kRst | flags::kAck);
  EXPECT_EQ(r.ack, 7001u);
  Deliver(40000, 81, 7000, 12345, flags::kAck, 65535);
  r = tx_.Pop();
  EXPECT_EQ(r.flags, flags::kRst);
  EXPECT_EQ(r.seq, 12345u);
  Deliver(40000, 81, 7000, 12345, flags::kRst, 0);  // never answer a RST
  EXPECT_TRUE(tx_.sent.empty());
  EXPECT_EQ(Count(TcpCounter::kDropNoConn), 3u);
}

TEST_F(EngineTest, DataInOrderOutOfOrderAndOutsideTheWindow) {
  Conn* c = Establish();
  const auto d = Bytes(3000);
  std::uint32_t s0 = peer_iss_ + 1;
  // Second half first: kept out of order, answered at once with a duplicate ACK.
  Deliver(40000, 80, s0 + 1000, our_iss_ + 1, flags::kAck, 1000, std::span(d).subspan(1000, 1000));
  Segment a = tx_.Pop();
  EXPECT_EQ(a.ack, s0);
  std::byte out[4000];
  EXPECT_EQ(engine_->Recv(c, out).error().code(), ErrorCode::kWouldBlock);
  // The hole is filled: ACK at once for both.
  Deliver(40000, 80, s0, our_iss_ + 1, flags::kAck, 1000, std::span(d).first(1000));
  a = tx_.Pop();
  EXPECT_EQ(a.ack, s0 + 2000);
  // Far beyond the window: dropped, counted, answered with an ACK of RCV.NXT.
  Deliver(40000, 80, s0 + 10'000'000, our_iss_ + 1, flags::kAck, 1000, std::span(d).first(100));
  EXPECT_EQ(Count(TcpCounter::kDropOutOfWindow), 1u);
  EXPECT_EQ(tx_.Pop().ack, s0 + 2000);
  // Entirely old: the same.
  Deliver(40000, 80, s0, our_iss_ + 1, flags::kAck, 1000, std::span(d).first(500));
  EXPECT_EQ(Count(TcpCounter::kDropOutOfWindow), 2u);
  EXPECT_EQ(tx_.Pop().ack, s0 + 2000);
  // Overlapping old and new: the new part is taken.
  Deliver(40000, 80, s0 + 1500, our_iss_ + 1, flags::kAck, 1000, std::span(d).subspan(1500, 1500));
  auto n = engine_->Recv(c, out);
  ASSERT_TRUE(n.has_value());
  ASSERT_EQ(*n, 3000u);
  EXPECT_EQ(std::memcmp(out, d.data(), 3000), 0);
  engine_->Close(c);
}

TEST_F(EngineTest, RstExactlyAtRcvNxtResets) {
  Conn* c = Establish();
  Deliver(40000, 80, peer_iss_ + 1, 0, flags::kRst, 0);
  EXPECT_EQ(Count(TcpCounter::kResetsIn), 1u);
  std::byte out[10];
  auto r = engine_->Recv(c, out);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().sys_errno(), ECONNRESET);
  EXPECT_TRUE(tx_.sent.empty());  // no answer to a RST
  engine_->Close(c);
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, RstInWindowButNotExactGetsAChallengeAck) {
  Conn* c = Establish();
  Deliver(40000, 80, peer_iss_ + 1 + 500, 0, flags::kRst, 0);
  EXPECT_EQ(Count(TcpCounter::kResetsIn), 0u);
  EXPECT_EQ(Count(TcpCounter::kChallengeAcks), 1u);
  Segment a = tx_.Pop();
  EXPECT_EQ(a.flags, flags::kAck);
  EXPECT_EQ(a.ack, peer_iss_ + 1);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kEstablished);
  // Outside the window: dropped silently.
  Deliver(40000, 80, peer_iss_ + 1 + 10'000'000, 0, flags::kRst, 0);
  EXPECT_TRUE(tx_.sent.empty());
  EXPECT_EQ(Count(TcpCounter::kDropOutOfWindow), 1u);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kEstablished);
  engine_->Close(c);
}

TEST_F(EngineTest, SynAndBadAckOnAnEstablishedConnectionGetChallengeAcks) {
  Conn* c = Establish();
  Deliver(40000, 80, peer_iss_ + 1, 0, flags::kSyn, 65535);  // RFC 5961 4.2
  EXPECT_EQ(tx_.Pop().flags, flags::kAck);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 100000, flags::kAck, 1000);  // acks unsent data
  EXPECT_EQ(tx_.Pop().flags, flags::kAck);
  EXPECT_EQ(Count(TcpCounter::kChallengeAcks), 2u);
  EXPECT_EQ(Count(TcpCounter::kDropBadAck), 1u);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kEstablished);
  engine_->Close(c);
}

TEST_F(EngineTest, ChallengeAcksAreRateLimited) {
  Conn* c = Establish();
  for (int i = 0; i < 1100; ++i) Deliver(40000, 80, peer_iss_ + 1, 0, flags::kSyn, 65535);
  EXPECT_EQ(Count(TcpCounter::kChallengeAcks), 1000u);
  EXPECT_EQ(Count(TcpCounter::kDropRateLimited), 100u);
  engine_->Close(c);
}

TEST_F(EngineTest, ActiveOpenRefusedByRst) {
  auto c = engine_->Connect(Endpoint{kPeer, 9000});
  ASSERT_TRUE(c.has_value());
  Segment syn = tx_.Pop();
  EXPECT_EQ(syn.flags, flags::kSyn);
  EXPECT_EQ(engine_->ConnectResult(*c).error().code(), ErrorCode::kWouldBlock);
  // A RST with a wrong ACK is ignored (and answered), one with the right ACK refuses.
  Deliver(syn.dst_port, syn.src_port, 0, syn.seq + 7, flags::kRst | flags::kAck, 0);
  EXPECT_EQ(engine_->ConnectResult(*c).error().code(), ErrorCode::kWouldBlock);
  Deliver(syn.dst_port, syn.src_port, 0, syn.seq + 1, flags::kRst | flags::kAck, 0);
  auto r = engine_->ConnectResult(*c);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().sys_errno(), ECONNREFUSED);
  engine_->Close(*c);
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, SimultaneousOpen) {
  auto cr = engine_->Connect(Endpoint{kPeer, 9000});
  ASSERT_TRUE(cr.has_value());
  Conn* c = *cr;
  Segment syn = tx_.Pop();
  // The peer's SYN crosses ours.
  Deliver(9000, syn.src_port, 3000, 0, flags::kSyn, 65535, {}, {1460, 2});
  Segment sa = tx_.Pop();
  EXPECT_EQ(sa.flags, flags::kSyn | flags::kAck);
  EXPECT_EQ(sa.seq, syn.seq);
  EXPECT_EQ(sa.ack, 3001u);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kSynReceived);
  // Its SYN,ACK (old sequence number, carrying the ACK of ours) is answered with an ACK.
  Deliver(9000, syn.src_port, 3000, syn.seq + 1, flags::kSyn | flags::kAck, 65535, {}, {1460, 2});
  Segment a = tx_.Pop();
  EXPECT_EQ(a.flags, flags::kAck);
  EXPECT_EQ(a.ack, 3001u);
  // Its ACK completes the open.
  Deliver(9000, syn.src_port, 3001, syn.seq + 1, flags::kAck, 65535);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kEstablished);
  EXPECT_TRUE(engine_->ConnectResult(c).has_value());
  engine_->Close(c);
}

TEST_F(EngineTest, SimultaneousCloseThroughClosingToTimeWait) {
  Conn* c = Establish();
  ASSERT_TRUE(engine_->Shutdown(c).has_value());
  Segment fin = tx_.Pop();
  EXPECT_EQ(fin.flags, flags::kFin | flags::kAck);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kFinWait1);
  // The peer's FIN crosses ours (it does not acknowledge our FIN).
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kFin | flags::kAck, 1000);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kClosing);
  EXPECT_EQ(tx_.Pop().ack, peer_iss_ + 2);
  Deliver(40000, 80, peer_iss_ + 2, our_iss_ + 2, flags::kAck, 1000);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kTimeWait);
  std::byte out[4];
  EXPECT_EQ(*engine_->Recv(c, out), 0u);  // EOF
  engine_->Close(c);
  EXPECT_EQ(engine_->num_conns(), 1u);  // TIME_WAIT keeps the pair
  // The 2 MSL timer, 1 s away. NextTimerNs is a lower bound (the wheel files a deadline that
  // moved later lazily: here the FIN's retransmission timer's slot comes first).
  EXPECT_LE(engine_->NextTimerNs(), g_now + 1000 * kMs);
  Advance(990 * kMs);
  EXPECT_EQ(engine_->num_conns(), 1u);  // the pair stays for 2 MSL
  EXPECT_GT(engine_->NextTimerNs(), g_now);
  EXPECT_LE(engine_->NextTimerNs(), g_now + 10 * kMs);  // refiled in its own slot by now
  Advance(110 * kMs);
  EXPECT_EQ(engine_->NextTimerNs(), INT64_MAX);
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, PassiveCloseThroughLastAck) {
  Conn* c = Establish();
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kFin | flags::kAck, 1000);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kCloseWait);
  g_now += 30 * kMs;
  std::byte out[4];
  EXPECT_EQ(*engine_->Recv(c, out), 0u);
  tx_.sent.clear();
  engine_->Close(c);
  Segment fin = tx_.Pop();
  EXPECT_TRUE(fin.has(flags::kFin));
  Deliver(40000, 80, peer_iss_ + 2, our_iss_ + 2, flags::kAck, 1000);
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, TimeWaitAnswersARetransmittedFinThenANewerSynReusesThePair) {
  Conn* c = Establish();
  ASSERT_TRUE(engine_->Shutdown(c).has_value());
  tx_.Pop();
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 2, flags::kAck, 1000);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kFinWait2);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 2, flags::kFin | flags::kAck, 1000);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kTimeWait);
  tx_.Pop();
  engine_->Close(c);
  // The peer missed our ACK: its FIN again is ACKed again.
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 2, flags::kFin | flags::kAck, 1000);
  EXPECT_EQ(tx_.Pop().ack, peer_iss_ + 2);
  // A SYN not above RCV.NXT is a challenge (RFC 5961 4.2), a newer one opens a new connection.
  Deliver(40000, 80, peer_iss_ + 2, 0, flags::kSyn, 65535);
  EXPECT_EQ(tx_.Pop().flags, flags::kAck);
  EXPECT_EQ(Count(TcpCounter::kChallengeAcks), 1u);
  Deliver(40000, 80, peer_iss_ + 100000, 0, flags::kSyn, 65535, {}, {1460, 7});
  Segment sa = tx_.Pop();
  EXPECT_EQ(sa.flags, flags::kSyn | flags::kAck);
  EXPECT_EQ(sa.ack, peer_iss_ + 100001);
  Deliver(40000, 80, peer_iss_ + 100001, sa.seq + 1, flags::kAck, 1000);
  Conn* c2 = engine_->Accept(80);
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(engine_->Info(c2).state, TcpState::kEstablished);
  engine_->Close(c2);
}

// A port whose TX side is full refuses frames (TcpTx::Alloc): the engine neither loses the
// data nor waits for a retransmission timeout; the next pass (Advance) sends it, as new data.
TEST_F(EngineTest, RefusedFramesGoOutOnTheNextPassNotAfterATimeout) {
  Conn* c = Establish();
  tx_.refuse = 1'000'000;
  const auto data = Bytes(3000);
  auto n = engine_->Send(c, data);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 3000u) << "queued in the send buffer even though nothing could go out";
  EXPECT_TRUE(tx_.sent.empty());
  EXPECT_GE(Count(TcpCounter::kTxDeferred), 1u);
  Advance(0);  // still full: nothing, and no error
  EXPECT_TRUE(tx_.sent.empty());
  tx_.refuse = 0;
  Advance(0);  // the port drained: the same pass sends everything, with no time passing
  std::uint32_t seq = our_iss_ + 1;
  std::size_t got = 0;
  while (!tx_.sent.empty()) {
    Segment s = tx_.Pop();
    EXPECT_EQ(s.seq, seq);
    seq += static_cast<std::uint32_t>(s.payload.size());
    got += s.payload.size();
  }
  EXPECT_EQ(got, 3000u);
  EXPECT_EQ(Count(TcpCounter::kRetransmits), 0u);
  EXPECT_EQ(Count(TcpCounter::kRtoTimeouts), 0u);
  EXPECT_EQ(Count(TcpCounter::kTxNoBuffer), 0u) << "a deferral is not a drop";
  engine_->Close(c);
}

// A connection freed while it waits for the port is forgotten by the retry list.
TEST_F(EngineTest, AConnectionAbortedWhileTheTxSideIsFullIsNotRetried) {
  Conn* c = Establish();
  Conn* other = Establish(40001);
  tx_.refuse = 1'000'000;
  ASSERT_TRUE(engine_->Send(c, Bytes(500)).has_value());
  ASSERT_TRUE(engine_->Send(other, Bytes(500)).has_value());
  engine_->Abort(c);
  engine_->Close(c);  // freed now
  tx_.refuse = 0;
  Advance(0);
  Segment s = tx_.Pop();
  EXPECT_EQ(s.payload.size(), 500u) << "the other connection's data goes out";
  EXPECT_TRUE(tx_.sent.empty());
  engine_->Close(other);
}

TEST_F(EngineTest, DelayedAckAfterOneSegmentImmediateAfterTwo) {
  Conn* c = Establish();
  const auto d = Bytes(1460 * 3);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 1000, std::span(d).first(100));
  EXPECT_TRUE(tx_.sent.empty());
  Advance(25 * kMs);
  Segment a = tx_.Pop();
  EXPECT_EQ(a.ack, peer_iss_ + 101);
  EXPECT_EQ(Count(TcpCounter::kDelayedAcks), 1u);
  Deliver(40000, 80, peer_iss_ + 101, our_iss_ + 1, flags::kAck, 1000, std::span(d).first(1460));
  EXPECT_TRUE(tx_.sent.empty());
  Deliver(40000, 80, peer_iss_ + 1561, our_iss_ + 1, flags::kAck, 1000, std::span(d).first(1460));
  EXPECT_EQ(tx_.Pop().ack, peer_iss_ + 3021);  // every second full segment
  engine_->Close(c);
}

// Karn's rule (RFC 6298 section 3): an ACK for a retransmitted segment gives no RTT sample, and
// the backed-off RTO stays until a segment sent once is acknowledged.
TEST_F(EngineTest, KarnsRuleAndRtoBackoff) {
  Conn* c = Establish();
  const ConnInfo i0 = engine_->Info(c);
  EXPECT_EQ(i0.rtt_samples, 1u);  // the SYN,ACK was timed: 10 ms
  EXPECT_EQ(i0.srtt_ns, 10 * kMs);
  const std::int64_t rto0 = i0.rto_ns;
  EXPECT_EQ(rto0, 200 * kMs);  // 10 + 4 * 5 ms, below the minimum
  const auto d = Bytes(100);
  ASSERT_EQ(*engine_->Send(c, d), 100u);
  Segment first = tx_.Pop();
  EXPECT_EQ(first.payload.size(), 100u);
  Advance(rto0 + 2 * kMs);  // lost: the timer fires
  Segment again = tx_.Pop();
  EXPECT_EQ(again.seq, first.seq);
  EXPECT_EQ(Count(TcpCounter::kRtoTimeouts), 1u);
  EXPECT_EQ(Count(TcpCounter::kRetransmits), 1u);
  EXPECT_EQ(engine_->Info(c).rto_ns, 2 * rto0);
  // The ACK (of the first send or the second? ambiguous) must not be sampled.
  Advance(50 * kMs);
  Deliver(40000, 80, peer_iss_ + 1, first.seq + 100, flags::kAck, 1000);
  ConnInfo i1 = engine_->Info(c);
  EXPECT_EQ(i1.rtt_samples, 1u);
  EXPECT_EQ(i1.rto_ns, 2 * rto0);
  // A segment sent once and acknowledged is sampled and the RTO recomputed.
  ASSERT_EQ(*engine_->Send(c, d), 100u);
  Segment next = tx_.Pop();
  Advance(30 * kMs);
  Deliver(40000, 80, peer_iss_ + 1, next.seq + 100, flags::kAck, 1000);
  ConnInfo i2 = engine_->Info(c);
  EXPECT_EQ(i2.rtt_samples, 2u);
  EXPECT_EQ(i2.rto_ns, rto0);
  engine_->Close(c);
}

// A Send is timed from the clock, not from the engine's last time (here 50 ms old: the uthread
// ran that long since the engine last read it): the RTO fires an RTO after the send, and the
// RTT sample is the real one.
TEST_F(EngineTest, ASendIsTimedFromTheClockNotFromTheEnginesLastReading) {
  Conn* c = Establish();
  const ConnInfo i0 = engine_->Info(c);
  ASSERT_EQ(i0.srtt_ns, 10 * kMs);
  const std::int64_t rto0 = i0.rto_ns;
  g_now += 50 * kMs;  // no pass, no clock read by the engine meanwhile
  const auto d = Bytes(100);
  ASSERT_EQ(*engine_->Send(c, d), 100u);
  engine_->FlushTx();
  Segment first = tx_.Pop();
  Advance(rto0 - 10 * kMs);  // an RTO from the stale time would have fired by now
  EXPECT_TRUE(tx_.sent.empty()) << "retransmitted early: the RTO ran from the stale time";
  EXPECT_EQ(Count(TcpCounter::kRtoTimeouts), 0u);
  Deliver(40000, 80, peer_iss_ + 1, first.seq + 100, flags::kAck, 1000);
  const ConnInfo i1 = engine_->Info(c);
  EXPECT_EQ(i1.rtt_samples, 2u);
  // srtt = 7/8 x 10 ms + 1/8 x the sample (190 ms from the flush; 240 from the stale time).
  EXPECT_EQ(i1.srtt_ns, (7 * 10 * kMs + (rto0 - 10 * kMs)) / 8);
  engine_->Close(c);
}

// Fast retransmit on the third duplicate ACK, NewReno partial ACKs (RFC 6582): each partial
// ACK resends the next hole at once, without waiting for the timer; the full ACK ends recovery
// with cwnd = min(ssthresh, flight + MSS).
TEST_F(EngineTest, FastRetransmitAndNewRenoPartialAcks) {
  Conn* c = Establish(40000, {100, 0});  // MSS 100: many segments in a small window
  const std::uint32_t base = our_iss_ + 1;
  const auto d = Bytes(4000);
  ASSERT_EQ(*engine_->Send(c, d), 4000u);
  // Grow cwnd by acknowledging segments one by one until 12 are in flight.
  std::uint32_t acked = base;
  while (engine_->Info(c).cwnd < 1200) {
    Segment s = tx_.Pop();
    acked = s.seq + static_cast<std::uint32_t>(s.payload.size());
    Deliver(40000, 80, peer_iss_ + 1, acked, flags::kAck, 60000);
  }
  tx_.sent.clear();
  const ConnInfo before = engine_->Info(c);
  const std::uint32_t flight = before.snd_nxt - before.snd_una;
  ASSERT_GE(flight, 1000u);
  const std::uint32_t lost1 = before.snd_una;        // the first segment in flight
  const std::uint32_t lost2 = before.snd_una + 300;  // and the fourth
  // Duplicate ACKs for what followed the first loss.
  for (int i = 0; i < 2; ++i) Deliver(40000, 80, peer_iss_ + 1, lost1, flags::kAck, 60000);
  EXPECT_TRUE(tx_.sent.empty());
  EXPECT_EQ(Count(TcpCounter::kFastRetransmits), 0u);
  Deliver(40000, 80, peer_iss_ + 1, lost1, flags::kAck, 60000);
  EXPECT_EQ(Count(TcpCounter::kFastRetransmits), 1u);
  Segment rx1 = tx_.Pop();
  EXPECT_EQ(rx1.seq, lost1);
  ConnInfo in = engine_->Info(c);
  EXPECT_TRUE(in.in_recovery);
  EXPECT_EQ(in.ssthresh, flight / 2);
  EXPECT_EQ(in.recover, before.snd_nxt);
  // More duplicates inflate the window (and may send new data).
  for (int i = 0; i < 4; ++i) Deliver(40000, 80, peer_iss_ + 1, lost1, flags::kAck, 60000);
  EXPECT_EQ(Count(TcpCounter::kFastRetransmits), 1u);
  tx_.sent.clear();
  // A partial ACK up to the second hole: it is resent at once.
  Deliver(40000, 80, peer_iss_ + 1, lost2, flags::kAck, 60000);
  EXPECT_EQ(Count(TcpCounter::kPartialAckRetransmits), 1u);
  bool resent = false;
  while (!tx_.sent.empty()) resent |= tx_.Pop().seq == lost2;
  EXPECT_TRUE(resent);
  EXPECT_TRUE(engine_->Info(c).in_recovery);
  // The full ACK ends recovery.
  const ConnInfo mid = engine_->Info(c);
  Deliver(40000, 80, peer_iss_ + 1, mid.recover, flags::kAck, 60000);
  const ConnInfo after = engine_->Info(c);
  EXPECT_FALSE(after.in_recovery);
  EXPECT_EQ(after.cwnd,
            std::min(after.ssthresh, std::max<std::uint32_t>(mid.snd_nxt - mid.recover, 100) + 100));
  EXPECT_EQ(Count(TcpCounter::kRtoTimeouts), 0u);
  EXPECT_EQ(engine_->Info(c).retransmits, 2u);
  engine_->Close(c);
}

// A retransmission covers only what was sent before, never queued data past SND.MAX (which
// the peer would acknowledge beyond what we think we sent).
TEST_F(EngineTest, RetransmissionsStopAtSndMax) {
  Conn* c = Establish(40000, {100, 0});
  const std::uint32_t base = our_iss_ + 1;
  Deliver(40000, 80, peer_iss_ + 1, base, flags::kAck, 250);  // a 250-byte window
  const auto d = Bytes(1000);
  ASSERT_EQ(*engine_->Send(c, d), 1000u);
  std::uint32_t sent_to = base;
  while (!tx_.sent.empty()) {
    Segment s = tx_.Pop();
    sent_to = std::max(sent_to, s.seq + static_cast<std::uint32_t>(s.payload.size()));
  }
  ASSERT_EQ(sent_to, base + 250);
  for (int i = 0; i < 3; ++i) Deliver(40000, 80, peer_iss_ + 1, base, flags::kAck, 250);
  Segment fr = tx_.Pop();
  EXPECT_EQ(fr.seq, base);
  EXPECT_LE(fr.seq + fr.payload.size(), base + 250);
  tx_.sent.clear();
  Deliver(40000, 80, peer_iss_ + 1, base + 200, flags::kAck, 250);  // partial: [200, 250) lost
  ASSERT_FALSE(tx_.sent.empty());
  Segment pr = tx_.Pop();
  EXPECT_EQ(pr.seq, base + 200);
  EXPECT_EQ(pr.payload.size(), 50u);
  engine_->Close(c);
}

TEST_F(EngineTest, ZeroWindowProbesBackOffUntilTheWindowOpens) {
  Conn* c = Establish();
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 0);  // window shut
  const auto d = Bytes(5000);
  ASSERT_EQ(*engine_->Send(c, d), 5000u);
  EXPECT_TRUE(tx_.sent.empty());
  const std::int64_t rto = engine_->Info(c).rto_ns;
  Advance(rto + 2 * kMs);
  Segment p1 = tx_.Pop();
  EXPECT_EQ(p1.payload.size(), 1u);
  EXPECT_EQ(p1.seq, our_iss_ + 1);
  EXPECT_EQ(Count(TcpCounter::kZeroWindowProbes), 1u);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 0);  // still shut
  Advance(rto + 2 * kMs);
  EXPECT_TRUE(tx_.sent.empty());  // backed off: twice the interval
  Advance(rto + 2 * kMs);
  EXPECT_EQ(tx_.Pop().payload.size(), 1u);
  EXPECT_EQ(Count(TcpCounter::kZeroWindowProbes), 2u);
  for (int i = 0; i < 20; ++i) {  // a long shut window never times the connection out
    Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 0);
    Advance(60'000 * kMs);
  }
  EXPECT_EQ(engine_->Info(c).state, TcpState::kEstablished);
  tx_.sent.clear();
  // The window opens (the probe byte was not taken): data flows from that byte on, no hole.
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 1000);
  ASSERT_FALSE(tx_.sent.empty());
  Segment s1 = tx_.Pop();
  EXPECT_EQ(s1.seq, our_iss_ + 1);
  EXPECT_GT(s1.payload.size(), 1u);
  EXPECT_EQ(Count(TcpCounter::kRtoTimeouts), 0u);
  engine_->Close(c);
}

// A window shut behind data in flight (or by a stale ACK) leaves nothing sendable: the
// retransmission timer then probes with the head segment and never gives up while the
// connection is held; an ACK opening the window lets it continue.
TEST_F(EngineTest, WindowShutWithDataInFlightIsProbedNotTimedOut) {
  Conn* c = Establish();
  const auto d = Bytes(4000);
  ASSERT_EQ(*engine_->Send(c, d), 4000u);
  tx_.sent.clear();
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 0);  // shut, nothing acked
  for (int i = 0; i < 40; ++i) Advance(60'000 * kMs);
  EXPECT_EQ(engine_->Info(c).state, TcpState::kEstablished);
  EXPECT_GE(Count(TcpCounter::kZeroWindowProbes), 10u);
  ASSERT_FALSE(tx_.sent.empty());
  EXPECT_EQ(tx_.Pop().seq, our_iss_ + 1);  // the head
  tx_.sent.clear();
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1 + 1460, flags::kAck, 1000);
  EXPECT_EQ(engine_->Info(c).snd_una, our_iss_ + 1 + 1460);
  const auto more = Bytes(2000);
  ASSERT_EQ(*engine_->Send(c, more), 2000u);
  ASSERT_FALSE(tx_.sent.empty());  // data flows again
  EXPECT_EQ(tx_.Pop().seq, our_iss_ + 4001);
  engine_->Close(c);
}

TEST_F(EngineTest, ReceiverAdvertisesZeroWindowWhenFullAndUpdatesAfterRead) {
  Conn* c = Establish();
  const auto d = Bytes(1460);
  std::uint32_t seq = peer_iss_ + 1;
  for (int i = 0; i < 45; ++i) {  // 64 KiB buffer
    Deliver(40000, 80, seq, our_iss_ + 1, flags::kAck, 1000, d);
    seq += 1460;
  }
  EXPECT_LT(engine_->Info(c).rcv_wnd, 1460u);
  tx_.sent.clear();
  std::vector<std::byte> out(70000);
  ASSERT_GT(*engine_->Recv(c, out), 60000u);
  Segment upd = tx_.Pop();  // window update
  EXPECT_GT(static_cast<std::uint32_t>(upd.window), 0u);
  engine_->Close(c);
}

// Request/response with small messages: a read that leaves the peer most of the buffer sends
// no window update of its own (an extra frame every ~23 64-byte RPCs); the responses carry the
// right edge forward instead, so the peer's window stays wide open.
TEST_F(EngineTest, SmallReadsWithAWideWindowSendNoUpdateOfTheirOwn) {
  Conn* c = Establish();
  const int ws = engine_->Info(c).rcv_wscale;
  const auto req = Bytes(64);
  std::uint32_t seq = peer_iss_ + 1, our = our_iss_ + 1, first_edge = 0, last_edge = 0;
  std::vector<std::byte> in(256);
  for (int i = 0; i < 100; ++i) {
    Deliver(40000, 80, seq, our, flags::kAck | flags::kPsh, 1000, req);
    seq += 64;
    tx_.sent.clear();
    ASSERT_EQ(*engine_->Recv(c, in), 64u);
    EXPECT_TRUE(tx_.sent.empty()) << "a window update of its own after read " << i;
    ASSERT_EQ(*engine_->Send(c, req), 64u);
    ASSERT_EQ(tx_.sent.size(), 1u) << "round " << i;
    const Segment resp = tx_.Pop();
    EXPECT_EQ(resp.ack, seq);
    const std::uint32_t edge = resp.ack + (static_cast<std::uint32_t>(resp.window) << ws);
    if (i == 0) first_edge = edge;
    if (i > 0) {
      EXPECT_FALSE(SeqLt(edge, last_edge)) << "the right edge moved left in round " << i;
    }
    last_edge = edge;
    our += 64;
  }
  EXPECT_GE(last_edge - first_edge, 64u * 90) << "the responses did not carry the edge forward";
  engine_->Close(c);
}

// Once the peer's FIN is in, reading the buffer sends no window update: nothing more can come,
// and a peer that has freed the connection since would answer it with a reset.
TEST_F(EngineTest, NoWindowUpdateAfterThePeersFin) {
  Conn* c = Establish();
  const auto d = Bytes(1460);
  std::uint32_t seq = peer_iss_ + 1;
  for (int i = 0; i < 45; ++i) {  // 64 KiB buffer: the window all but shut
    Deliver(40000, 80, seq, our_iss_ + 1, flags::kAck, 1000, d);
    seq += 1460;
  }
  Deliver(40000, 80, seq, our_iss_ + 1, flags::kAck | flags::kFin, 1000);
  tx_.sent.clear();
  std::vector<std::byte> out(70000);
  ASSERT_GT(*engine_->Recv(c, out), 60000u);
  EXPECT_TRUE(tx_.sent.empty()) << "a window update after FIN";
  engine_->Close(c);
}

// Linux probes a shut window with SEQ = RCV.NXT - 1 and no data: it must get an ACK (with our
// window), or a lost window update would hang the connection.
TEST_F(EngineTest, LinuxStyleWindowProbeGetsAnAck) {
  Conn* c = Establish();
  const auto d = Bytes(100);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 1000, d);
  Advance(25 * kMs);  // the delayed ACK goes out
  tx_.sent.clear();
  Deliver(40000, 80, peer_iss_ + 100, our_iss_ + 1, flags::kAck, 1000);
  Segment a = tx_.Pop();
  EXPECT_EQ(a.ack, peer_iss_ + 101);
  // An ACK from the peer that we have not yet acknowledged past is taken quietly.
  Deliver(40000, 80, peer_iss_ + 101, our_iss_ + 1, flags::kAck, 1000);
  EXPECT_TRUE(tx_.sent.empty());
  engine_->Close(c);
}

// After a timeout rewinds SND.NXT (go back N), an ACK still carries the highest sequence sent:
// the peer has maybe received it all, and would find an older one unacceptable.
TEST_F(EngineTest, AckAfterTimeoutCarriesTheHighestSequenceSent) {
  Conn* c = Establish();
  const auto d = Bytes(3000);
  ASSERT_EQ(*engine_->Send(c, d), 3000u);
  tx_.sent.clear();
  Advance(engine_->Info(c).rto_ns + 2 * kMs);
  EXPECT_EQ(tx_.Pop().seq, our_iss_ + 1);  // one segment again, cwnd = 1 MSS
  EXPECT_LT(engine_->Info(c).snd_nxt, our_iss_ + 3001);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck | flags::kPsh, 1000, std::span(d).first(10));
  Advance(25 * kMs);
  bool acked = false;
  while (!tx_.sent.empty()) {
    Segment a = tx_.Pop();
    if (a.payload.empty() && a.ack == peer_iss_ + 11) {
      EXPECT_EQ(a.seq, our_iss_ + 3001);
      acked = true;
    }
  }
  EXPECT_TRUE(acked);
  engine_->Close(c);
}

// With window scaling, odd-sized segments must not make the advertised right edge move left
// (RFC 9293 3.8.6.2.2): a peer that filled the old window would find our ACKs unacceptable.
TEST_F(EngineTest, AdvertisedRightEdgeNeverMovesLeft) {
  Conn* c = Establish();
  const int ws = engine_->Info(c).rcv_wscale;
  ASSERT_GT(ws, 0);
  const auto d = Bytes(997);
  std::uint32_t seq = peer_iss_ + 1, edge = 0;
  for (int i = 0; i < 60; ++i) {
    Deliver(40000, 80, seq, our_iss_ + 1, flags::kAck, 1000, d);
    seq += 997;
    while (!tx_.sent.empty()) {
      Segment a = tx_.Pop();
      const std::uint32_t right = a.ack + (static_cast<std::uint32_t>(a.window) << ws);
      if (edge != 0) {
        EXPECT_TRUE(SeqGeq(right, edge)) << "segment " << i;
      }
      edge = right;
    }
  }
  EXPECT_NE(edge, 0u);
  engine_->Close(c);
}

TEST_F(EngineTest, CloseWithUnreadDataSendsRst) {
  Conn* c = Establish();
  const auto d = Bytes(10);
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck, 1000, d);
  tx_.sent.clear();
  engine_->Close(c);
  EXPECT_TRUE(tx_.Pop().has(flags::kRst));
  EXPECT_EQ(engine_->num_conns(), 0u);
}

TEST_F(EngineTest, RetransmissionGivesUpWithTimedOut) {
  Conn* c = Establish();
  const auto d = Bytes(10);
  ASSERT_TRUE(engine_->Send(c, d).has_value());
  for (int i = 0; i < 40; ++i) Advance(60'000 * kMs);
  std::byte out[4];
  auto r = engine_->Recv(c, out);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kTimedOut);
  EXPECT_EQ(Count(TcpCounter::kRtoTimeouts), 13u);
  engine_->Close(c);
}

}  // namespace
}  // namespace junction::net::tcp

namespace junction::net::tcp {
namespace {

// The socket layer asks RecvReady before a read and waits when it says no: it must say yes
// exactly when Recv would not answer kWouldBlock, in every state a reader meets.
TEST_F(EngineTest, RecvReadyIsTrueExactlyWhenRecvWouldNotBlock) {
  Conn* c = Establish();
  std::byte out[16];
  auto would_block = [&] {
    auto r = engine_->Recv(c, out);
    return !r && r.error().code() == ErrorCode::kWouldBlock;
  };
  EXPECT_FALSE(engine_->RecvReady(c));
  EXPECT_TRUE(would_block());
  std::byte d[10]{};
  Deliver(40000, 80, peer_iss_ + 1, our_iss_ + 1, flags::kAck | flags::kPsh, 1000, std::span(d));
  EXPECT_TRUE(engine_->RecvReady(c));
  EXPECT_EQ(*engine_->Recv(c, out), 10u);
  EXPECT_FALSE(engine_->RecvReady(c));
  EXPECT_TRUE(would_block());
  Deliver(40000, 80, peer_iss_ + 11, our_iss_ + 1, flags::kFin | flags::kAck, 1000);
  EXPECT_TRUE(engine_->RecvReady(c));
  EXPECT_EQ(*engine_->Recv(c, out), 0u);  // end of stream

  tx_.sent.clear();  // the ACKs of the data and the FIN
  Conn* r = Establish(40001);
  EXPECT_FALSE(engine_->RecvReady(r));
  Deliver(40001, 80, peer_iss_ + 1, our_iss_ + 1, flags::kRst, 0);
  EXPECT_TRUE(engine_->RecvReady(r));
  auto got = engine_->Recv(r, out);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().code(), ErrorCode::kWouldBlock);
}

}  // namespace
}  // namespace junction::net::tcp
