// transfer_test.cc — bulk echo over every backend: 1 KB to 16 MB per connection over 1 and
// 100 parallel connections; the SHA-256 of what comes back must equal that of what was sent.
// Each connection has a writer and a reader uthread, so one conn is read while it is written.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "junction/net/net_test_util.h"
#include "junction/net/sha256.h"
#include "junction/net/stack.h"

namespace junction::net {
namespace {

using namespace testing;  // junction::net::testing
using ::testing::Combine;
using ::testing::TestWithParam;
using ::testing::Values;

using Params = std::tuple<std::string, std::size_t, int>;  // backend, bytes per conn, conns

class TransferTest : public TestWithParam<Params> {};

struct Side {
  Sha256::Digest digest{};
  std::uint64_t bytes = 0;
  std::string error;
};

// Writes `total` pattern bytes of stream `seed` in uneven chunks, then ends the stream.
void Send(TcpConn& c, std::uint64_t seed, std::size_t total, Deadline deadline, Side* out) {
  std::vector<std::byte> chunk(64 * 1024);
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

// Reads to end of stream, hashing.
void Receive(TcpConn& c, Deadline deadline, Side* out) {
  std::vector<std::byte> buf(48 * 1024);  // not the writer's size: boundaries differ
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

TEST_P(TransferTest, EchoedBytesHashTheSame) {
  const auto& [backend, bytes, conns] = GetParam();
  RunWithStack(backend, 2, [&, bytes = bytes, conns = conns](Stack& stack) {
    EchoServer server(stack);
    const Deadline deadline = In(120s);
    std::vector<TcpConn> cs(conns);
    for (int i = 0; i < conns; ++i) {
      auto c = stack.Connect(server.endpoint(), deadline);
      ASSERT_TRUE(c.has_value()) << c.error().message();
      cs[i] = std::move(*c);
    }
    std::vector<Side> sent(conns), received(conns);
    std::vector<sched::JoinHandle> threads;
    for (int i = 0; i < conns; ++i) {
      auto w = sched::Spawn([&, i] { Send(cs[i], 1000 + i, bytes, deadline, &sent[i]); });
      auto r = sched::Spawn([&, i] { Receive(cs[i], deadline, &received[i]); });
      ASSERT_TRUE(w.has_value() && r.has_value());
      threads.push_back(std::move(*w));
      threads.push_back(std::move(*r));
    }
    for (auto& t : threads) t.Join();
    for (int i = 0; i < conns; ++i) {
      SCOPED_TRACE("connection " + std::to_string(i));
      EXPECT_EQ(sent[i].error, "");
      EXPECT_EQ(received[i].error, "");
      EXPECT_EQ(sent[i].bytes, bytes);
      EXPECT_EQ(received[i].bytes, bytes);
      EXPECT_EQ(Sha256::Hex(received[i].digest), Sha256::Hex(sent[i].digest));
      cs[i].Close();
    }
    server.Stop();
    EXPECT_EQ(server.handled(), static_cast<std::uint64_t>(conns));
    const NetCounters total = stack.counters().Total();
    EXPECT_EQ(total.bytes_in, 2ull * bytes * conns);  // server reads + client reads
    EXPECT_EQ(total.bytes_out, 2ull * bytes * conns);
    EXPECT_EQ(total.errors, 0u);
  });
}

std::string Name(const ::testing::TestParamInfo<Params>& info) {
  const auto& [backend, bytes, conns] = info.param;
  const std::string size =
      bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MB" : std::to_string(bytes >> 10) + "KB";
  return backend + "_" + size + "_x" + std::to_string(conns);
}

INSTANTIATE_TEST_SUITE_P(Sizes, TransferTest,
                         Combine(Values("loopback", "kernel"),
                                 Values(std::size_t{1} << 10, std::size_t{64} << 10,
                                        std::size_t{1} << 20, std::size_t{16} << 20),
                                 Values(1, 100)),
                         Name);

}  // namespace
}  // namespace junction::net
