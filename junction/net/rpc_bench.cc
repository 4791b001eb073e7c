// rpc_bench.cc — 64-byte request/response RPC over loopback TCP: the kernel stack on the
// uthread runtime (client on core 0, server on core 1) against a blocking-socket pair of
// std::threads pinned the same way, in one run; prints p50/p99 latency, RPCs/s and ratios.
// Not part of ctest. See docs/benchmarks/net.md. The dpdk backend over net_memif (with the raw
// memif floor and this kernel path again, in one run) is junction/net/dpdk/memif_rpc_bench.cc.
//
//   junction_net_rpc_bench [--rpcs N] [--warmup N] [--cpus A,B]
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "junction/net/kernel_socket.h"
#include "junction/net/stack.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace {

using namespace junction;
using namespace junction::net;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMsg = 64;

struct Result {
  std::string name;
  double p50_us = 0, p99_us = 0, rpcs_per_s = 0;
  std::uint64_t rpcs = 0;
};

Result Summarise(std::string name, std::vector<std::int64_t>& ns, Clock::duration total) {
  std::sort(ns.begin(), ns.end());
  Result r;
  r.name = std::move(name);
  r.rpcs = ns.size();
  if (ns.empty()) return r;
  r.p50_us = static_cast<double>(ns[ns.size() / 2]) / 1e3;
  r.p99_us = static_cast<double>(ns[ns.size() * 99 / 100]) / 1e3;
  r.rpcs_per_s = static_cast<double>(ns.size()) / std::chrono::duration<double>(total).count();
  return r;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rpc_bench: %s\n", what.c_str());
  std::exit(1);
}

// --- the runtime + kernel stack ----------------------------------------------------------------

Result RunRuntime(int cpu_client, int cpu_server, int warmup, int rpcs) {
  auto rt = sched::Runtime::Create(sched::RuntimeConfig{.cores = {cpu_client, cpu_server}});
  if (!rt) Die(rt.error().message());
  Result result;
  auto run = (*rt)->Run([&] {
    auto stack = CreateStack("kernel");
    if (!stack) Die(stack.error().message());
    auto listener = (*stack)->Listen(Endpoint{Ipv4Addr::Loopback(), 0});
    if (!listener) Die(listener.error().message());
    auto server = sched::Spawn(
        [&] {
          auto c = listener->Accept();
          if (!c) Die(c.error().message());
          std::array<std::byte, kMsg> buf;
          while (c->ReadExactly(buf)) {
            if (!c->Write(buf)) break;
          }
        },
        {.core = 1, .stealable = false});
    auto client = sched::Spawn(
        [&] {
          auto c = (*stack)->Connect(listener->local_endpoint());
          if (!c) Die(c.error().message());
          std::array<std::byte, kMsg> req{}, resp{};
          std::vector<std::int64_t> ns;
          ns.reserve(rpcs);
          for (int i = 0; i < warmup; ++i) {
            if (!c->Write(req) || !c->ReadExactly(resp)) Die("runtime warm-up RPC failed");
          }
          const auto start = Clock::now();
          for (int i = 0; i < rpcs; ++i) {
            const auto t0 = Clock::now();
            if (auto w = c->Write(req); !w) Die(w.error().message());
            if (auto r = c->ReadExactly(resp); !r) Die(r.error().message());
            ns.push_back((Clock::now() - t0).count());
          }
          result = Summarise("kernel stack on uthreads", ns, Clock::now() - start);
          c->Close();
        },
        {.core = 0, .stealable = false});
    client->Join();
    server->Join();
    listener->Close();
  });
  if (!run) Die(run.error().message());
  return result;
}

// --- blocking sockets on two std::threads ----------------------------------------------------

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

bool FullIo(int fd, std::byte* p, std::size_t n, bool write) {
  while (n > 0) {
    const ssize_t r = write ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

Result RunThreads(int cpu_client, int cpu_server, int warmup, int rpcs) {
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa = kernel::ToSockaddr(Endpoint{Ipv4Addr::Loopback(), 0});
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(lfd, 16) != 0) {
    Die("blocking baseline: bind/listen failed");
  }
  const Endpoint ep = kernel::LocalEndpointOf(lfd);
  const int one = 1;
  std::thread server([&] {
    Pin(cpu_server);
    const int c = ::accept(lfd, nullptr, nullptr);
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::array<std::byte, kMsg> buf;
    while (FullIo(c, buf.data(), kMsg, false) && FullIo(c, buf.data(), kMsg, true)) {
    }
    ::close(c);
  });
  Result result;
  std::thread client([&] {
    Pin(cpu_client);
    const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to = kernel::ToSockaddr(ep);
    if (::connect(c, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) Die("connect failed");
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::array<std::byte, kMsg> req{}, resp{};
    std::vector<std::int64_t> ns;
    ns.reserve(rpcs);
    for (int i = 0; i < warmup; ++i) {
      if (!FullIo(c, req.data(), kMsg, true) || !FullIo(c, resp.data(), kMsg, false)) {
        Die("blocking warm-up RPC failed");
      }
    }
    const auto start = Clock::now();
    for (int i = 0; i < rpcs; ++i) {
      const auto t0 = Clock::now();
      if (!FullIo(c, req.data(), kMsg, true) || !FullIo(c, resp.data(), kMsg, false)) {
        Die("blocking RPC failed");
      }
      ns.push_back((Clock::now() - t0).count());
    }
    result = Summarise("blocking sockets, 2 std::threads", ns, Clock::now() - start);
    ::close(c);
  });
  client.join();
  server.join();
  ::close(lfd);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  int rpcs = 100000, warmup = 10000;
  std::vector<int> cpus = sched::AllowedCpus();
  int cpu_client = cpus.empty() ? 0 : cpus[0];
  int cpu_server = cpus.size() > 1 ? cpus[1] : cpu_client;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rpcs" && i + 1 < argc) {
      rpcs = std::atoi(argv[++i]);
    } else if (a == "--warmup" && i + 1 < argc) {
      warmup = std::atoi(argv[++i]);
    } else if (a == "--cpus" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%d,%d", &cpu_client, &cpu_server) != 2) Die("--cpus A,B");
    } else {
      Die("usage: junction_net_rpc_bench [--rpcs N] [--warmup N] [--cpus A,B]");
    }
  }
  if (rpcs < 100) Die("--rpcs must be at least 100");
  fmt::print(
      "64-byte RPC over loopback TCP, {} RPCs after {} warm-up, client cpu {}, server cpu {}\n",
      rpcs, warmup, cpu_client, cpu_server);
  const Result rt = RunRuntime(cpu_client, cpu_server, warmup, rpcs);
  const Result th = RunThreads(cpu_client, cpu_server, warmup, rpcs);
  fmt::print("{:<36} {:>10} {:>10} {:>12}\n", "path", "p50 us", "p99 us", "RPCs/s");
  for (const Result& r : {rt, th}) {
    fmt::print("{:<36} {:>10.2f} {:>10.2f} {:>12.0f}\n", r.name, r.p50_us, r.p99_us, r.rpcs_per_s);
  }
  fmt::print("ratio runtime/threads: p50 {:.2f}x, p99 {:.2f}x, RPCs/s {:.2f}x\n",
             rt.p50_us / th.p50_us, rt.p99_us / th.p99_us, rt.rpcs_per_s / th.rpcs_per_s);
  fmt::print("dpdk/memif: see junction_net_dpdk_rpc_bench (junction/net/dpdk/memif_rpc_bench.cc)\n");
  return 0;
}
