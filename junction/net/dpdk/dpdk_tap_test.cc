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
  static void SetUpTestSuite() {
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
  static void TearDownTestSuite() {
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

}  // namespace
}  // namespace junction::net::dpdk
