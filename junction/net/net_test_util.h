// net_test_util.h — helpers for the junction/net tests: run a body with a stack inside a
// runtime, an echo server, and deterministic test data.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"
#include "junction/sched/test_util.h"

namespace junction::net::testing {

using namespace std::chrono_literals;

inline Endpoint LocalAny() {
  return Endpoint{Ipv4Addr::Loopback(), 0};
}
inline Deadline In(Clock::duration d) {
  return Clock::now() + d;
}
inline std::span<const std::byte> AsBytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// Runs `body` on a uthread of a `cores`-core runtime with a fresh stack of `backend`.
inline void RunWithStack(const std::string& backend, int cores, std::function<void(Stack&)> body) {
  sched::testing::RunOnCores(cores, [&] {
    auto stack = CreateStack(backend);
    ASSERT_TRUE(stack.has_value()) << stack.error().message();
    body(**stack);
  });
}

// Echoes every connection of a listener until the peer ends its stream, then ends its own.
// Stop() closes the listener and waits for every connection handler.
class EchoServer {
 public:
  explicit EchoServer(Stack& stack, std::size_t buffer_bytes = 64 * 1024)
      : buffer_bytes_(buffer_bytes) {
    auto l = stack.Listen(LocalAny());
    EXPECT_TRUE(l.has_value()) << l.error().message();
    if (!l) return;
    listener_ = std::move(*l);
    endpoint_ = listener_.local_endpoint();
    auto h = sched::Spawn([this] { AcceptLoop(); });
    EXPECT_TRUE(h.has_value());
    if (h) acceptor_ = std::move(*h);
  }
  ~EchoServer() { Stop(); }

  Endpoint endpoint() const { return endpoint_; }
  std::uint64_t handled() const { return handled_.load(); }
  std::uint64_t failures() const { return failures_.load(); }

  void Stop() {
    if (!acceptor_.joinable()) return;
    listener_.Close();
    acceptor_.Join();
    handlers_.Wait();
  }

 private:
  void AcceptLoop() {
    for (;;) {
      auto conn = listener_.Accept();
      if (!conn) {
        EXPECT_TRUE(conn.error().code() == ErrorCode::kClosed) << conn.error().message();
        return;
      }
      handlers_.Add(1);
      auto s = sched::SpawnDetached([this, c = std::move(*conn)]() mutable {
        Echo(c);
        handlers_.Done();
      });
      EXPECT_TRUE(s.has_value());
    }
  }

  void Echo(TcpConn& c) {
    std::vector<std::byte> buf(buffer_bytes_);
    for (;;) {
      auto n = c.Read(buf, In(120s));
      if (!n) {
        failures_.fetch_add(1);
        ADD_FAILURE() << "echo read: " << n.error().message();
        return;
      }
      if (*n == 0) break;
      if (auto w = c.Write(std::span(buf).first(*n), In(120s)); !w) {
        failures_.fetch_add(1);
        ADD_FAILURE() << "echo write: " << w.error().message();
        return;
      }
    }
    EXPECT_TRUE(c.ShutdownWrite().has_value());
    c.Close();
    handled_.fetch_add(1);
  }

  std::size_t buffer_bytes_;
  TcpListener listener_;
  Endpoint endpoint_;
  sched::JoinHandle acceptor_;
  sched::WaitGroup handlers_;
  std::atomic<std::uint64_t> handled_{0};
  std::atomic<std::uint64_t> failures_{0};
};

// Deterministic pseudo-random bytes, different for every (seed, block).
inline void FillPattern(std::uint64_t seed, std::uint64_t block, std::span<std::byte> out) {
  std::uint64_t x = (seed << 40) ^ (block * 0xD1B54A32D192ED03ull);
  for (std::size_t i = 0; i < out.size(); i += 8) {
    // splitmix64 of the running counter: every 8-byte word depends on (seed, position).
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const std::size_t n = std::min<std::size_t>(8, out.size() - i);
    std::memcpy(out.data() + i, &z, n);
  }
}

}  // namespace junction::net::testing
