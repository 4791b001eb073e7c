// engine_memory_test.cc — what a connection costs in memory: a SYN flood at the default
// backlog and buffer sizes holds no ring storage (only connection blocks); rings get storage
// with the first bytes each way and give it back to the per-core pool when the connection
// ends, so churn reuses it; TIME_WAIT holds none.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "junction/net/stack.h"
#include "junction/net/tcp/engine.h"
#include "junction/net/tcp/engine_test_clock.h"
#include "junction/net/tcp/segment.h"

namespace junction::net::tcp {
namespace {

using engine_test::FakeNow;
using engine_test::g_now;
using engine_test::kMs;
using engine_test::kPeer;
using engine_test::kUs;

// Keeps the last segment the engine sent (enough to follow a handshake).
class LastTx final : public TcpTx {
 public:
  std::optional<TxFrame> Alloc(Ipv4Addr, Ipv4Addr, std::size_t len) override {
    return TxFrame{std::span(buf_).first(len), nullptr};
  }
  void Send(TxFrame f, std::size_t len) override {
    last.assign(f.tcp.begin(), f.tcp.begin() + static_cast<std::ptrdiff_t>(len));
    ++sent;
  }
  void Discard(TxFrame) override {}
  TxChecksum checksum_mode() const override { return TxChecksum::kSoftware; }
  std::uint16_t mtu() const override { return 1500; }
  Segment Last() {
    Segment s;
    EXPECT_EQ(ParseSegment(last, &s), ParseError::kOk);
    return s;
  }
  std::vector<std::byte> last;
  int sent = 0;

 private:
  std::byte buf_[1500];
};

class EngineMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_now = 1'000'000'000;
    EngineOptions o;  // the default buffer sizes: 256 KiB each way
    o.local_addr = kUs;
    o.clock_ns = &FakeNow;
    o.iss_secret = 7;
    engine_ = std::make_unique<Engine>(o, &tx_);
    ASSERT_TRUE(engine_->Listen(Endpoint{kUs, 80}, backlog_, nullptr).has_value());
  }
  void Deliver(std::uint16_t from, std::uint32_t seq, std::uint32_t ack, std::uint8_t fl,
               std::span<const std::byte> payload = {}) {
    std::vector<std::byte> b(kHeaderBytes + payload.size());
    WriteHeader(b.data(), from, 80, seq, ack, fl, 65535, 0);
    if (!payload.empty()) std::memcpy(&b[kHeaderBytes], payload.data(), payload.size());
    const auto ck = static_cast<std::uint16_t>(
        ~ChecksumFold(ChecksumAdd(PseudoHeaderSum(kPeer, kUs, b.size()), b)));
    std::memcpy(&b[16], &ck, 2);
    engine_->Input(RxSegment{kPeer, kUs, b, false});
  }
  // A handshake from `port`, accepted; returns the connection and our ISS.
  Conn* Establish(std::uint16_t port, std::uint32_t* our_iss) {
    Deliver(port, 1000, 0, flags::kSyn);
    *our_iss = tx_.Last().seq;
    Deliver(port, 1001, *our_iss + 1, flags::kAck);
    return engine_->Accept(80);
  }

  const int backlog_ = ListenOptions{}.backlog;
  LastTx tx_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineMemoryTest, SynFloodAtTheDefaultBacklogHoldsNoRingStorage) {
  ASSERT_LE(backlog_, 1024) << "the default backlog bounds a flood's memory per core";
  const int extra = 100;
  for (int i = 0; i < backlog_ + extra; ++i) {
    Deliver(static_cast<std::uint16_t>(1024 + i), 5000, 0, flags::kSyn);
  }
  EXPECT_EQ(engine_->counters().Get(TcpCounter::kDropBacklog), static_cast<std::uint64_t>(extra));
  EXPECT_EQ(engine_->num_conns(), static_cast<std::size_t>(backlog_));
  const EngineMemory m = engine_->memory();
  EXPECT_EQ(m.conns, static_cast<std::size_t>(backlog_));
  EXPECT_EQ(m.ring_bytes, 0u) << "half-open connections must not hold send/receive rings";
  EXPECT_EQ(m.ring_bytes_kept, 0u);
  // What one half-open connection costs: its block (plus a flow-table node).
  EXPECT_LE(Engine::ConnStateBytes(), 1024u);
  EXPECT_LE(m.conn_state_bytes, std::size_t{1} << 20) << "a full backlog within a MiB per core";
  fmt::print("half-open connection: {} bytes; {} of them: {} KiB (was 2 x 256 KiB of rings each)\n",
             Engine::ConnStateBytes(), backlog_, m.conn_state_bytes / 1024);
  // The flood's handshakes time out and their blocks are freed.
  for (int i = 0; i < 200; ++i) {
    g_now += 1000 * kMs;
    engine_->Advance(g_now);
  }
  EXPECT_EQ(engine_->memory().conns, 0u);
}

TEST_F(EngineMemoryTest, RingsGetStorageWithTheFirstBytesAndPoolItWhenDone) {
  const std::size_t snd = EngineOptions{}.send_buffer_bytes;
  std::uint32_t iss = 0;
  Conn* c = Establish(40000, &iss);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(engine_->memory().ring_bytes, 0u) << "established, nothing sent or received yet";
  const std::vector<std::byte> hello(5, std::byte{'h'});
  Deliver(40000, 1001, iss + 1, flags::kAck | flags::kPsh, hello);
  const std::size_t rcv = engine_->memory().ring_bytes;
  EXPECT_GE(rcv, EngineOptions{}.recv_buffer_bytes) << "the receive ring took storage";
  std::byte buf[16];
  ASSERT_EQ(engine_->Recv(c, buf).value_or(0), 5u);
  ASSERT_TRUE(engine_->Send(c, hello).has_value());
  EXPECT_EQ(engine_->memory().ring_bytes, rcv + snd);
  // We close first: FIN, the peer ACKs it and sends its FIN: TIME_WAIT keeps no rings.
  engine_->Close(c);
  Deliver(40000, 1006, iss + 1 + 5 + 1, flags::kAck | flags::kFin);
  EXPECT_EQ(engine_->memory().conns, 1u);  // in TIME_WAIT
  EXPECT_EQ(engine_->memory().ring_bytes, 0u);
  EXPECT_EQ(engine_->memory().ring_bytes_kept, rcv + snd);
  // A second connection reuses the pooled storage: nothing new is kept or held beyond it.
  Conn* d = Establish(40001, &iss);
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(engine_->Send(d, hello).has_value());
  EXPECT_EQ(engine_->memory().ring_bytes, snd);
  EXPECT_EQ(engine_->memory().ring_bytes_kept, rcv);
  engine_->Abort(d);
  engine_->Close(d);
  EXPECT_EQ(engine_->memory().ring_bytes, 0u);
  EXPECT_EQ(engine_->memory().ring_bytes_kept, rcv + snd);
}

}  // namespace
}  // namespace junction::net::tcp
