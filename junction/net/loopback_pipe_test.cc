// loopback_pipe_test.cc — the loopback backend's byte ring and pipe: wrap-around, EOF,
// reset, broken pipe, deadlines and back-pressure.
#include "junction/net/loopback_pipe.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace junction::net::loopback {
namespace {

using namespace std::chrono_literals;
using sched::Clock;

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s));
}

TEST(ByteRingTest, WrapsAround) {
  ByteRing r(8);
  const char in[] = "abcdefgh";
  char out[8] = {};
  r.Put(in, 6);
  r.Get(out, 4);
  EXPECT_EQ(std::string(out, 4), "abcd");
  r.Put(in, 6);  // wraps: 2 left + 6 = 8
  EXPECT_EQ(r.size(), 8u);
  EXPECT_EQ(r.space(), 0u);
  r.Get(out, 8);
  EXPECT_EQ(std::string(out, 8), "efabcdef");
  EXPECT_EQ(r.size(), 0u);
}

TEST(PipeTest, EndOfStreamAfterTheBufferedBytes) {
  sched::testing::RunOnCores(1, [] {
    Pipe p(64);
    ASSERT_EQ(p.Write(Bytes("hello"), Clock::now() + 1s).status, PipeStatus::kOk);
    p.CloseWrite();
    std::byte buf[16];
    auto r = p.Read(buf, Clock::now() + 1s);
    EXPECT_EQ(r.status, PipeStatus::kOk);
    EXPECT_EQ(r.bytes, 5u);
    r = p.Read(buf, Clock::now() + 1s);
    EXPECT_EQ(r.status, PipeStatus::kOk);
    EXPECT_EQ(r.bytes, 0u);  // EOF
    EXPECT_EQ(p.Write(Bytes("x"), Clock::now() + 1s).status, PipeStatus::kClosed);
  });
}

TEST(PipeTest, ResetAfterTheBufferedBytes) {
  sched::testing::RunOnCores(1, [] {
    Pipe p(64);
    ASSERT_EQ(p.Write(Bytes("abc"), Clock::now() + 1s).status, PipeStatus::kOk);
    p.Reset();
    std::byte buf[16];
    EXPECT_EQ(p.Read(buf, Clock::now() + 1s).bytes, 3u);
    EXPECT_EQ(p.Read(buf, Clock::now() + 1s).status, PipeStatus::kReset);
  });
}

TEST(PipeTest, WritersSeeTheReaderGo) {
  sched::testing::RunOnCores(1, [] {
    Pipe clean(64), aborted(64);
    clean.CloseRead(false);
    aborted.CloseRead(true);
    EXPECT_EQ(clean.Write(Bytes("x"), Clock::now() + 1s).status, PipeStatus::kBrokenPipe);
    EXPECT_EQ(aborted.Write(Bytes("x"), Clock::now() + 1s).status, PipeStatus::kReset);
  });
}

TEST(PipeTest, ReadTimesOutAndStaysUsable) {
  sched::testing::RunOnCores(1, [] {
    Pipe p(64);
    std::byte buf[4];
    const auto t0 = Clock::now();
    EXPECT_EQ(p.Read(buf, t0 + 20ms).status, PipeStatus::kTimedOut);
    EXPECT_GE(Clock::now() - t0, 20ms);
    ASSERT_EQ(p.Write(Bytes("ok"), Clock::now() + 1s).status, PipeStatus::kOk);
    EXPECT_EQ(p.Read(buf, Clock::now() + 1s).bytes, 2u);
  });
}

TEST(PipeTest, WriterParksUntilTheReaderMakesRoom) {
  sched::testing::RunOnCores(2, [] {
    Pipe p(1000);
    std::vector<std::byte> data(100000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 7);
    auto writer = sched::Spawn([&] {
      EXPECT_EQ(p.Write(data, Clock::now() + 10s).status, PipeStatus::kOk);
      p.CloseWrite();
    });
    std::vector<std::byte> got;
    std::byte buf[333];
    for (;;) {
      auto r = p.Read(buf, Clock::now() + 10s);
      ASSERT_EQ(r.status, PipeStatus::kOk);
      if (r.bytes == 0) break;
      got.insert(got.end(), buf, buf + r.bytes);
    }
    writer->Join();
    EXPECT_EQ(got, data);
  });
}

TEST(PipeTest, WriteTimesOutWhenNobodyReads) {
  sched::testing::RunOnCores(1, [] {
    Pipe p(16);
    std::string big(100, 'x');
    auto r = p.Write(Bytes(big), Clock::now() + 20ms);
    EXPECT_EQ(r.status, PipeStatus::kTimedOut);
    EXPECT_EQ(r.bytes, 16u);
  });
}

}  // namespace
}  // namespace junction::net::loopback
