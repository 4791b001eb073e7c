// dpdk_memif_test.cc — two dpdk stacks in two processes over net_memif (shared memory, no
// kernel on the data path): a forked child on CPU 1 with its own EAL (its own --file-prefix)
// echoes UDP datagrams; the parent on CPU 0 sends requests and checks every response. ARP
// resolves over the memif link first. Needs root (memif's socket, EAL without hugepages is
// fine). The child exits only after the parent's stack stopped polling (a memif peer that
// goes away under a polling one can crash it).
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "junction/net/dpdk/dpdk_stack.h"
#include "junction/net/dpdk/dpdk_test_util.h"
#include "junction/sched/test_util.h"

namespace junction::net::dpdk {
namespace {

using namespace std::chrono_literals;

const Ipv4Addr kParentIp(10, 88, 0, 1);
const Ipv4Addr kChildIp(10, 88, 0, 2);
constexpr std::uint16_t kEchoPort = 7;
constexpr int kRequests = 500;

StackOptions MemifOptions(const std::string& socket, bool server, Ipv4Addr ip) {
  StackOptions o;
  o.dpdk = dpdk::testing::TestOptions();
  o.dpdk.eal_args.push_back(fmt::format("--vdev=net_memif0,role={},socket={},id=0",
                                        server ? "server" : "client", socket));
  o.dpdk.port = "net_memif0";
  o.dpdk.ip = ip;
  o.dpdk.idle_poll_max_us = 200;
  return o;
}

bool WaitLinkUp(std::uint16_t port, Clock::duration limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) return true;
    sched::SleepFor(5ms);
  }
  return false;
}

sched::RuntimeConfig OnCpu(int i) {
  sched::RuntimeConfig c;
  auto cpus = sched::AllowedCpus();
  c.cores = {cpus[std::min<std::size_t>(i, cpus.size() - 1)]};
  return c;
}

// The child: echo until "bye", then wait for the parent to close the pipe. Exit code 0: ok.
[[noreturn]] void Child(const std::string& socket, int ready_fd, int done_fd) {
  int rc = 10;
  // A memif client connects once, at port start: wait until the server listens (its socket
  // is an abstract one by default: nothing to wait for in the file system).
  char c;
  if (read(ready_fd, &c, 1) != 1) _exit(15);
  {
    auto rt = sched::Runtime::Create(OnCpu(1));
    if (!rt) _exit(11);
    (void)(*rt)->Run([&] {
      auto s = DpdkStack::Create(MemifOptions(socket, false, kChildIp));
      if (!s) {
        fmt::print(stderr, "child: {}\n", s.error().message());
        rc = 12;
        return;
      }
      auto sock = (*s)->BindUdp(Endpoint{Ipv4Addr::Any(), kEchoPort});
      if (!sock) {
        rc = 13;
        return;
      }
      std::array<std::byte, 2048> buf;
      for (;;) {
        auto d = sock->RecvFrom(buf, Clock::now() + 20s);
        if (!d) {
          rc = 14;
          break;
        }
        (void)sock->SendTo(std::span(buf.data(), d->size), d->from);
        if (d->size == 3 && std::memcmp(buf.data(), "bye", 3) == 0) {
          rc = 0;
          break;
        }
      }
      (void)!read(done_fd, &c, 1);  // blocks this core until the parent stopped polling
      sock->Close();
    });
  }
  _exit(rc);
}

TEST(DpdkMemifTest, UdpRequestResponseBetweenTwoProcesses) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (memif control socket)";
  const std::string socket = fmt::format("/tmp/fn-memif-{}.sock", getpid());
  unlink(socket.c_str());
  int pipefd[2], readyfd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  ASSERT_EQ(pipe(readyfd), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipefd[1]);
    close(readyfd[1]);
    Child(socket, readyfd[0], pipefd[0]);
  }
  close(pipefd[0]);
  close(readyfd[0]);
  int ok = 0;
  std::vector<double> rtt_us;
  {
    auto rt = sched::Runtime::Create(OnCpu(0));
    ASSERT_TRUE(rt.has_value());
    auto run = (*rt)->Run([&] {
      auto s = DpdkStack::Create(MemifOptions(socket, true, kParentIp));
      ASSERT_TRUE(s.has_value()) << s.error().message();
      ASSERT_EQ(write(readyfd[1], "r", 1), 1);  // the server listens: the child may connect
      close(readyfd[1]);
      ASSERT_TRUE(WaitLinkUp((*s)->port().id(), 10s)) << "memif link never came up";
      auto sock = (*s)->BindUdp(Endpoint{Ipv4Addr::Any(), 0});
      ASSERT_TRUE(sock.has_value());
      const Endpoint peer{kChildIp, kEchoPort};
      std::array<std::byte, 2048> buf;
      for (int i = 0; i < kRequests; ++i) {
        const std::string msg = fmt::format("request {} {}", i, std::string(i % 1000, 'r'));
        const auto t0 = Clock::now();
        ASSERT_TRUE(sock->SendTo(std::as_bytes(std::span(msg)), peer).has_value());
        auto d = sock->RecvFrom(buf, Clock::now() + 2s);
        if (!d) continue;  // counted as missing below
        rtt_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (d->size == msg.size() && std::memcmp(buf.data(), msg.data(), d->size) == 0 &&
            d->from == peer) {
          ok++;
        }
      }
      ASSERT_TRUE(sock->SendTo(std::as_bytes(std::span("bye", 3)), peer).has_value());
      (void)sock->RecvFrom(buf, Clock::now() + 2s);
      sock->Close();
    });
    EXPECT_TRUE(run.has_value());
  }
  close(pipefd[1]);  // our stack no longer polls: the child may go
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  unlink(socket.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(ok, kRequests);
  if (!rtt_us.empty()) {
    std::sort(rtt_us.begin(), rtt_us.end());
    fmt::print("memif UDP request/response: {} round trips, p50 {:.1f} us, p99 {:.1f} us\n",
               rtt_us.size(), rtt_us[rtt_us.size() / 2], rtt_us[rtt_us.size() * 99 / 100]);
  }
}

}  // namespace
}  // namespace junction::net::dpdk
