// dpdk_tap_test.cc — the dpdk stack behind net_tap, with the Linux kernel as its peer, inside
// a network namespace this test creates (never the host's: the whole test process moves into
// it before the EAL starts, so the tap is born there). The kernel pings the stack and talks
// UDP to it; an idle stack must sleep, not spin. Needs root (CAP_NET_ADMIN, /dev/net/tun).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <thread>

#include <rte_ethdev.h>
#include "junction/net/dpdk/dpdk_stack.h"
#include "junction/net/net_test_util.h"
#include "junction/net/sha256.h"
#include "junction/net/dpdk/dpdk_test_util.h"
#include "junction/sched/test_util.h"

namespace junction::net::dpdk {
namespace {

using namespace std::chrono_literals;

const Ipv4Addr kNodeIp(10, 77, 0, 2);
const char* kKernelIp = "10.77.0.1";

int Sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Runs blocking work (a kernel client) on a thread of its own while the calling uthread
// sleeps, so its core keeps polling the port (joining a std::thread would block the core).
void WaitOffCore(std::thread& t, std::atomic<bool>* done = nullptr) {
  if (done != nullptr) {
    while (!done->load()) sched::SleepFor(1ms);
  }
  t.join();
}
template <typename F>
void OffCore(F&& fn) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    fn();
    done = true;
  });
  WaitOffCore(t, &done);
}

class DpdkTapTest : public ::testing::Test {
 protected:
  // Once per process for every suite here (the EAL and the tap live as long as the process);
  // the namespace is deleted at exit.
  static void SetUpTestSuite() {
    if (set_up_) return;
    set_up_ = true;
    if (geteuid() != 0) {
      skip_ = "needs root (network namespace, /dev/net/tun)";
      return;
    }
    // Namespaces left by earlier runs that died (their pid is gone).
    Sh("for n in $(ip netns list 2>/dev/null | awk '/^fn-dpdk-/{print $1}'); do "
       "p=${n#fn-dpdk-}; [ -d /proc/$p ] || ip netns del $n; done");
    ns_ = fmt::format("fn-dpdk-{}", getpid());
    tap_ = fmt::format("fntap{}", getpid() % 100000);
    if (Sh("ip netns add " + ns_) != 0) {
      skip_ = "ip netns add failed";
      return;
    }
    std::atexit(DeleteNamespace);
    const int fd = open(("/var/run/netns/" + ns_).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(setns(fd, CLONE_NEWNET), 0) << "setns";  // this thread; threads made later inherit
    close(fd);
    ASSERT_EQ(Sh("ip link set lo up"), 0);
    DpdkOptions o = dpdk::testing::TestOptions();
    o.eal_args.push_back(fmt::format("--vdev=net_tap0,iface={}", tap_));
    auto eal = StartEal(o);
    ASSERT_TRUE(eal.has_value()) << eal.error().message();
  }
  static void DeleteNamespace() {
    if (!ns_.empty()) Sh("ip netns del " + ns_ + " 2>/dev/null");
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static StackOptions Options() {
    StackOptions o;
    o.dpdk = dpdk::testing::TestOptions();
    o.dpdk.port = "net_tap0";
    o.dpdk.ip = kNodeIp;
    return o;
  }
  // The kernel's side of the tap (after the port is up: DPDK brings the interface up).
  static void KernelSide() {
    Sh(fmt::format("ip addr flush dev {0}; ip addr add {1}/24 dev {0} && ip link set {0} up",
                   tap_, kKernelIp));
  }

  static inline bool set_up_ = false;
  static inline std::string skip_, ns_, tap_;
};

TEST_F(DpdkTapTest, KernelPingsTheStack) {
  sched::testing::RunOnCores(2, [&] {
    auto s = DpdkStack::Create(Options());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    KernelSide();
    std::string out;
    int rc = -1;
    OffCore([&] {
      rc = Sh(fmt::format("ping -c 5 -i 0.2 -W 2 -q {} > /tmp/{}.ping 2>&1", kNodeIp.ToString(),
                          ns_));
    });
    EXPECT_EQ(rc, 0) << "ping failed: " << Sh("cat /tmp/" + ns_ + ".ping");
    Sh("cat /tmp/" + ns_ + ".ping; rm -f /tmp/" + ns_ + ".ping");
    const NetCounters c = (*s)->counters().Total();
    EXPECT_GE(c.icmp_echo_replies, 5u);
    EXPECT_GE(c.arp_in, 1u);
  });
}

TEST_F(DpdkTapTest, UdpEchoWithTheKernelsUdp) {
  sched::testing::RunOnCores(2, [&] {
    auto s = DpdkStack::Create(Options());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    KernelSide();
    auto sock = (*s)->BindUdp(Endpoint{Ipv4Addr::Any(), 7007});
    ASSERT_TRUE(sock.has_value()) << sock.error().message();
    constexpr int kRounds = 200;
    auto echo = sched::Spawn([&] {
      std::array<std::byte, 2048> buf;
      for (int i = 0; i < kRounds; ++i) {
        auto d = sock->RecvFrom(buf, Clock::now() + 3s);
        if (!d) return;
        (void)sock->SendTo(std::span(buf.data(), d->size), d->from);
      }
    });
    ASSERT_TRUE(echo.has_value());
    int ok = 0;
    std::atomic<bool> client_done{false};
    std::thread client([&] {
      const int fd = socket(AF_INET, SOCK_DGRAM, 0);
      timeval tv{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(7007);
      to.sin_addr.s_addr = htonl(kNodeIp.host_order());
      for (int i = 0, misses = 0; i < kRounds && misses < 3; ++i) {
        const std::string msg = fmt::format("datagram {} {}", i, std::string(i * 7 % 1400, 'x'));
        sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
        char buf[2048];
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n == static_cast<ssize_t>(msg.size()) && std::memcmp(buf, msg.data(), n) == 0) {
          ok++;
        } else {
          misses++;
        }
      }
      close(fd);
      client_done = true;
    });
    WaitOffCore(client, &client_done);
    echo->Join();
    EXPECT_GE(ok, kRounds - 2) << "echoed intact";  // the first may race the link coming up
    const NetCounters c = (*s)->counters().Total();
    EXPECT_GE(c.datagrams_in, static_cast<std::uint64_t>(ok));
    EXPECT_EQ(c.drop_bad_checksum, 0u);
    sock->Close();

    // Idle: rx interrupts let the cores sleep.
    sched::SleepFor(50ms);
    const double cpu0 = CpuSeconds();
    const auto t0 = Clock::now();
    sched::SleepFor(500ms);
    const double used = (CpuSeconds() - cpu0) / std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_LT(used, 0.25) << "an idle dpdk stack on 2 cores used " << used * 100 << "% of a CPU";
    fmt::print("idle CPU with net_tap rx interrupts: {:.2f}% of one CPU\n", used * 100);
  });
}


// --- TCP: the kernel's TCP against the dpdk stack's ---

// A minimal HTTP/1.1 responder on the dpdk stack: reads one request head, answers, closes.
void ServeHttp(TcpListener& l, int requests) {
  for (int i = 0; i < requests; ++i) {
    auto c = l.Accept(Clock::now() + 10s);
    if (!c) return;
    std::string head;
    std::array<std::byte, 2048> buf;
    while (head.find("\r\n\r\n") == std::string::npos) {
      auto n = c->Read(buf, Clock::now() + 5s);
      if (!n || *n == 0) break;
      head.append(reinterpret_cast<const char*>(buf.data()), *n);
    }
    const std::string body = "hello from the dpdk stack\n";
    const std::string resp = fmt::format(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", body.size(), body);
    (void)c->Write(std::as_bytes(std::span(resp)), Clock::now() + 5s);
    (void)c->ShutdownWrite();
    // Wait for the peer's FIN before closing, so the close is orderly.
    while (true) {
      auto n = c->Read(buf, Clock::now() + 2s);
      if (!n || *n == 0) break;
    }
    c->Close();
  }
}

TEST_F(DpdkTapTest, CurlGetsAPageFromTheDpdkStack) {
  sched::testing::RunOnCores(2, [&] {
    auto s = DpdkStack::Create(Options());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    KernelSide();
    auto l = (*s)->Listen(Endpoint{Ipv4Addr::Any(), 8080});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    auto server = sched::Spawn([&] { ServeHttp(*l, 3); });
    ASSERT_TRUE(server.has_value());
    const std::string out = fmt::format("/tmp/{}.curl", ns_);
    int rc = -1;
    OffCore([&] {
      rc = Sh(fmt::format("for i in 1 2 3; do curl -sS --max-time 5 http://{}:8080/f/$i; done "
                          "> {} 2>&1", kNodeIp.ToString(), out));
    });
    server->Join();
    std::string got;
    if (FILE* f = fopen(out.c_str(), "r")) {
      char b[512];
      size_t n;
      while ((n = fread(b, 1, sizeof(b), f)) > 0) got.append(b, n);
      fclose(f);
    }
    unlink(out.c_str());
    EXPECT_EQ(rc, 0) << got;
    EXPECT_EQ(got, "hello from the dpdk stack\nhello from the dpdk stack\nhello from the dpdk stack\n");
    l->Close();
    EXPECT_GE((*s)->counters().Total().conns_accepted, 3u);
  });
}

struct Side {
  Sha256::Digest digest{};
  std::uint64_t bytes = 0;
  std::string error;
};

void SendAll(TcpConn& c, std::uint64_t seed, std::size_t total, Deadline deadline, Side* out) {
  std::vector<std::byte> chunk(32 * 1024);
  Sha256 h;
  std::uint64_t block = 0;
  while (out->bytes < total) {
    const std::size_t n = std::min<std::size_t>(total - out->bytes, 1 + (block * 7919) % chunk.size());
    auto piece = std::span(chunk).first(n);
    net::testing::FillPattern(seed, block++, piece);
    h.Update(piece);
    if (auto w = c.Write(piece, deadline); !w) {
      out->error = std::string(w.error().message());
      return;
    }
    out->bytes += n;
  }
  if (auto s = c.ShutdownWrite(); !s) out->error = std::string(s.error().message());
  out->digest = h.Finish();
}

void ReceiveAll(TcpConn& c, Deadline deadline, Side* out) {
  std::vector<std::byte> buf(24 * 1024);
  Sha256 h;
  for (;;) {
    auto n = c.Read(buf, deadline);
    if (!n) {
      out->error = std::string(n.error().message());
      return;
    }
    if (*n == 0) break;
    h.Update(std::span(buf).first(*n));
    out->bytes += *n;
  }
  out->digest = h.Finish();
}

// Echoes every connection of a listener on the dpdk stack (any address) until the peer ends
// its stream. Stop() closes the listener and waits for the handlers.
class Echo {
 public:
  explicit Echo(Stack& stack) {
    auto l = stack.Listen(Endpoint{Ipv4Addr::Any(), 0});
    EXPECT_TRUE(l.has_value()) << l.error().message();
    if (!l) return;
    listener_ = std::move(*l);
    auto h = sched::Spawn([this] {
      for (;;) {
        auto c = listener_.Accept();
        if (!c) return;
        group_.Add(1);
        (void)sched::SpawnDetached([this, c = std::move(*c)]() mutable {
          std::vector<std::byte> buf(32 * 1024);
          for (;;) {
            auto n = c.Read(buf, Clock::now() + 60s);
            if (!n) {
              errors_++;
              break;
            }
            if (*n == 0) {
              (void)c.ShutdownWrite();
              handled_++;
              break;
            }
            if (!c.Write(std::span(buf).first(*n), Clock::now() + 60s)) {
              errors_++;
              break;
            }
          }
          c.Close();
          group_.Done();
        });
      }
    });
    if (h) acceptor_ = std::move(*h);
  }
  ~Echo() { Stop(); }
  std::uint16_t port() const { return listener_.is_open() ? listener_.local_endpoint().port : 0; }
  void Stop() {
    if (!acceptor_.joinable()) return;
    listener_.Close();
    acceptor_.Join();
    group_.Wait();
  }
  std::uint64_t handled() const { return handled_.load(); }

 private:
  TcpListener listener_;
  sched::JoinHandle acceptor_;
  sched::WaitGroup group_;
  std::atomic<std::uint64_t> handled_{0}, errors_{0};
};

// Echo through the dpdk stack: `conns` kernel-backend clients (the Linux TCP, through the
// tap) each send `bytes` and read them back; every SHA-256 must match.
void EchoTransfer(DpdkStack& dpdk, std::size_t bytes, int conns, std::chrono::seconds limit) {
  auto kernel = CreateStack("kernel");
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message();
  Echo server(dpdk);
  const Endpoint to{kNodeIp, server.port()};
  const Deadline deadline = Clock::now() + limit;
  std::vector<TcpConn> cs(conns);
  for (int i = 0; i < conns; ++i) {
    auto c = (*kernel)->Connect(to, Clock::now() + 10s);
    ASSERT_TRUE(c.has_value()) << "connection " << i << ": " << c.error().message();
    cs[i] = std::move(*c);
  }
  std::vector<Side> sent(conns), received(conns);
  std::vector<sched::JoinHandle> threads;
  for (int i = 0; i < conns; ++i) {
    auto w = sched::Spawn([&, i] { SendAll(cs[i], 500 + i, bytes, deadline, &sent[i]); });
    auto r = sched::Spawn([&, i] { ReceiveAll(cs[i], deadline, &received[i]); });
    ASSERT_TRUE(w.has_value() && r.has_value());
    threads.push_back(std::move(*w));
    threads.push_back(std::move(*r));
  }
  for (auto& t : threads) t.Join();
  for (int i = 0; i < conns; ++i) {
    SCOPED_TRACE("connection " + std::to_string(i));
    EXPECT_EQ(sent[i].error, "");
    EXPECT_EQ(received[i].error, "");
    EXPECT_EQ(received[i].bytes, bytes);
    EXPECT_EQ(Sha256::Hex(received[i].digest), Sha256::Hex(sent[i].digest));
    cs[i].Close();
  }
  server.Stop();
  EXPECT_EQ(server.handled(), static_cast<std::uint64_t>(conns));
}

using TransferParams = std::tuple<std::size_t, int>;
class DpdkTapTransferTest : public DpdkTapTest,
                            public ::testing::WithParamInterface<TransferParams> {};

TEST_P(DpdkTapTransferTest, KernelClientsEchoThroughTheDpdkStack) {
  const auto [bytes, conns] = GetParam();
  sched::testing::RunOnCores(2, [&, bytes = bytes, conns = conns] {
    auto s = DpdkStack::Create(Options());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    KernelSide();
    const auto t0 = Clock::now();
    EchoTransfer(**s, bytes, conns, 120s);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    fmt::print("{} B x {} conns echoed in {:.3f} s ({:.1f} MB/s each way)\n", bytes, conns, secs,
               bytes * conns / secs / 1e6);
  });
}

std::string TransferName(const ::testing::TestParamInfo<TransferParams>& info) {
  const auto [bytes, conns] = info.param;
  const std::string size =
      bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MB" : std::to_string(bytes >> 10) + "KB";
  return size + "_x" + std::to_string(conns);
}

INSTANTIATE_TEST_SUITE_P(Sizes, DpdkTapTransferTest,
                         ::testing::Values(TransferParams{1 << 10, 1}, TransferParams{1 << 20, 1},
                                           TransferParams{16 << 20, 1},
                                           TransferParams{1 << 10, 100},
                                           TransferParams{64 << 10, 100},
                                           TransferParams{1 << 20, 100},
                                           TransferParams{16 << 20, 100}),
                         TransferName);

TEST_F(DpdkTapTest, EchoSurvivesFivePercentLossOnTheKernelSide) {
  sched::testing::RunOnCores(2, [&] {
    auto s = DpdkStack::Create(Options());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    KernelSide();
    ASSERT_EQ(Sh("nft add table inet fnloss && "
                 "nft add chain inet fnloss in '{ type filter hook input priority 0; }' && "
                 "nft add chain inet fnloss out '{ type filter hook output priority 0; }' && "
                 "nft add rule inet fnloss in meta l4proto tcp numgen random mod 100 \\< 5 drop && "
                 "nft add rule inet fnloss out meta l4proto tcp numgen random mod 100 \\< 5 drop"),
              0);
    EchoTransfer(**s, 1 << 20, 1, 120s);
    EchoTransfer(**s, 64 << 10, 10, 120s);
    Sh("nft delete table inet fnloss");
    EXPECT_GT((*s)->counters().Total().tcp_retransmits, 0u) << "the loss made the stack resend";
  });
}

TEST_F(DpdkTapTest, EchoSurvivesInjectedLossReorderAndDuplication) {
  sched::testing::RunOnCores(2, [&] {
    StackOptions o = Options();
    o.dpdk.faults = DpdkFaultOptions{.drop = 0.05, .reorder = 0.10, .duplicate = 0.01,
                                     .delay = 0, .delay_us = 200, .seed = 42, .rx = true,
                                     .tx = true};
    auto s = DpdkStack::Create(o);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    KernelSide();
    EchoTransfer(**s, 1 << 20, 1, 120s);
    EchoTransfer(**s, 64 << 10, 10, 120s);
    const FaultStats f = (*s)->fault_stats();
    EXPECT_GT(f.dropped, 0u);
    EXPECT_GT(f.reordered, 0u);
    EXPECT_GT(f.duplicated, 0u);
    fmt::print("faults: {} frames seen, {} dropped, {} reordered, {} duplicated\n", f.seen,
               f.dropped, f.reordered, f.duplicated);
  });
}

}  // namespace
}  // namespace junction::net::dpdk
