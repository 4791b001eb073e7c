// memif_rpc_bench.cc — the RPC benchmark over net_memif, all in one run: a forked
// child process (its own EAL, the memif client) on CPU B serves; this process (the memif
// server) on CPU A drives, in four phases one after the other:
//
//   1. raw memif ping-pong: 64-byte frames with rte_eth_tx_burst/rte_eth_rx_burst on both
//      sides, no stack at all (the floor of any request/response over memif here);
//   2. TCP 64-byte RPC on the dpdk backend: a 1-core runtime in each process, DpdkStack on the
//      port phase 1 started (user-space TCP at both ends), one connection, closed loop;
//   3. the raw ping-pong again, both stacks gone (the floor after; see below);
//   4. the same RPC on the kernel backend over loopback TCP: a 2-core runtime, client on CPU
//      A, server on CPU B (the child has exited by then).
//
// Prints p50/p99 per phase, RPCs/s closed loop (one RPC at a time) and with --window RPCs in
// flight on the connection (what one server core sustains; the RPCs/s target uses it), and the ratios the targets are about. Needs root
// (memif's control socket). Not part of ctest. See docs/benchmarks/net.md.
//
//   junction_net_dpdk_rpc_bench [--raw N] [--rpcs N] [--warmup N] [--cpus A,B]
//                               [--window N]             (RPCs in flight, default 16)
//                               [--idle-poll-max-us N]   (default 16: the stack busy-polls)
//
// The raw floor is measured twice, before and after the dpdk TCP phase (both processes go back
// to plain bursts on the port once their stacks are gone): this VM's host flips between a fast
// and a slow floor from one minute to the next, and a ratio against a floor that changed during
// the run means nothing. When the two disagree by more than 25% the run says so and judges no
// latency target; otherwise the latency ratios are against their mean.
//
// Teardown order: the child stops polling only after this process's stack is gone (a pipe),
// and this process outlives the child, so no side polls the rings of a vanished peer.
#include <fcntl.h>
#include <pthread.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "junction/net/dpdk/dpdk_stack.h"
#include "junction/net/dpdk/eal.h"
#include "junction/net/dpdk/port.h"
#include "junction/net/stack.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"

namespace {

using namespace junction;
using namespace junction::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMsg = 64;
constexpr std::uint16_t kPingType = 0x88B5;  // IEEE local experimental ethertypes
constexpr std::uint16_t kStopType = 0x88B6;
constexpr std::uint16_t kRpcPort = 7100;
const Ipv4Addr kParentIp(10, 90, 0, 1);
const Ipv4Addr kChildIp(10, 90, 0, 2);
constexpr auto kPhaseLimit = 60s;  // every phase is bounded in time as well as in count

// A measuring loop's share of its phase's time (the closed loop and the pipelined run each get
// a third of kPhaseLimit): past it the loop stops early, says so, and its figures are over the
// RPCs done. The phase's hard limit stays for a peer that stops answering (then it dies).
class SoftBound {
 public:
  SoftBound(std::string what, int wanted) : what_(std::move(what)), wanted_(wanted) {}
  // `done`: the RPCs completed so far. The clock is read every 256 of them (a read per RPC
  // would be part of what is measured).
  bool Reached(int done) {
    if (done == 0 || done % 256 != 0 || Clock::now() < at_) return false;
    fmt::print("{}: stopped at its {} s share of the time bound after {} of {} RPCs\n", what_,
               std::chrono::duration_cast<std::chrono::seconds>(kPhaseLimit / 3).count(), done,
               wanted_);
    return true;
  }

 private:
  std::string what_;
  int wanted_;
  Clock::time_point at_ = Clock::now() + kPhaseLimit / 3;
};

struct Result {
  std::string name;
  double p50_us = 0, p99_us = 0, per_s = 0;
  double pipelined_per_s = 0;  // TCP only: with g_window RPCs in flight
  std::uint64_t n = 0;
};

Result Summarise(std::string name, std::vector<std::int64_t>& ns, Clock::duration total) {
  std::sort(ns.begin(), ns.end());
  Result r;
  r.name = std::move(name);
  r.n = ns.size();
  if (ns.empty()) return r;
  r.p50_us = static_cast<double>(ns[ns.size() / 2]) / 1e3;
  r.p99_us = static_cast<double>(ns[ns.size() * 99 / 100]) / 1e3;
  r.per_s = static_cast<double>(ns.size()) / std::chrono::duration<double>(total).count();
  return r;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rpc_bench: %s\n", what.c_str());
  std::exit(1);
}

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// The dpdk stack's longest idle sleep between polls of memif (no rx interrupts). The node's
// default (2000 us) lets an idle core sleep; a gap in the closed loop longer than the
// runtime's spin (a preempted peer) then costs up to that much. --idle-poll-max-us sets it.
std::uint32_t g_idle_poll_max_us = 16;

StackOptions MemifOptions(const std::string& socket, bool server, Ipv4Addr ip) {
  StackOptions o;
  o.dpdk.idle_poll_max_us = g_idle_poll_max_us;
  o.dpdk.eal_args.push_back(fmt::format("--vdev=net_memif0,role={},socket={},id=0",
                                        server ? "server" : "client", socket));
  o.dpdk.port = "net_memif0";
  o.dpdk.ip = ip;
  o.dpdk.rx_descriptors = 256;
  o.dpdk.tx_descriptors = 256;
  return o;
}

dpdk::Port* OpenPort(const StackOptions& o) {
  auto eal = dpdk::StartEal(o.dpdk);
  if (!eal) Die(eal.error().message());
  if (auto r = dpdk::RegisterThisThread(); !r) Die(r.error().message());
  auto port = dpdk::Port::Open(o.dpdk, 1);
  if (!port) Die(port.error().message());
  return *port;
}

bool WaitLinkUp(std::uint16_t port, Clock::duration limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) return true;
    usleep(1000);
  }
  return false;
}

rte_mbuf* Frame(dpdk::Port& p, std::uint16_t type, std::uint64_t seq) {
  rte_mbuf* m = rte_pktmbuf_alloc(p.pool(0));
  if (m == nullptr) Die("raw: mbuf pool empty");
  auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, kMsg));
  if (d == nullptr) Die("raw: an mbuf too small for a 64-byte frame");
  std::memset(d, 0, kMsg);
  std::memset(d, 0xff, 6);
  std::memcpy(d + 6, p.mac().addr_bytes, 6);
  d[12] = type >> 8;
  d[13] = type & 0xff;
  std::memcpy(d + 14, &seq, sizeof(seq));
  return m;
}

std::uint16_t TypeOf(rte_mbuf* m) {
  const auto* d = rte_pktmbuf_mtod(m, const std::uint8_t*);
  return static_cast<std::uint16_t>(d[12] << 8 | d[13]);
}

void SendOne(dpdk::Port& p, rte_mbuf* m, Clock::time_point end) {
  while (rte_eth_tx_burst(p.id(), 0, &m, 1) == 0) {
    if (Clock::now() > end) Die("raw: tx ring full for the whole phase");
  }
}

// --- the child: raw echo, then a TCP echo on the dpdk stack until the parent is done ---------

// Raw: echo every frame back as it is, until the stop frame (echoed too). False on the
// phase's time limit.
bool RawEcho(dpdk::Port& p) {
  const auto end = Clock::now() + kPhaseLimit;
  std::array<rte_mbuf*, 32> rx;
  while (Clock::now() < end) {
    bool stop = false;
    const std::uint16_t n = rte_eth_rx_burst(p.id(), 0, rx.data(), rx.size());
    for (std::uint16_t i = 0; i < n; ++i) {
      if (TypeOf(rx[i]) == kStopType) stop = true;
      SendOne(p, rx[i], end);
    }
    if (stop) return true;
  }
  return false;
}

// done_fd: 't' when the parent's stack is gone (back to raw echo), EOF when the parent is done
// with the port. back_fd: 'r' once this side echoes raw frames again.
[[noreturn]] void Child(const std::string& socket, int cpu, int ready_fd, int done_fd, int back_fd) {
  char ch;
  if (read(ready_fd, &ch, 1) != 1) _exit(15);  // the memif server listens
  Pin(cpu);
  const StackOptions o = MemifOptions(socket, false, kChildIp);
  dpdk::Port& p = *OpenPort(o);
  if (!WaitLinkUp(p.id(), 10s)) _exit(16);
  if (!RawEcho(p)) _exit(17);
  // TCP: a 1-core runtime on the same CPU; the stack takes the started port over.
  int rc = 10;
  bool raw_again = false;
  {
    auto rt = sched::Runtime::Create(sched::RuntimeConfig{.cores = {cpu}});
    if (!rt) _exit(11);
    fcntl(done_fd, F_SETFL, O_NONBLOCK);
    (void)(*rt)->Run([&] {
      auto s = dpdk::DpdkStack::Create(o);
      if (!s) {
        std::fprintf(stderr, "child: %s\n", std::string(s.error().message()).c_str());
        rc = 12;
        return;
      }
      auto l = (*s)->Listen(Endpoint{Ipv4Addr::Any(), kRpcPort});
      if (!l) {
        rc = 13;
        return;
      }
      auto server = sched::Spawn([&] {
        auto c = l->Accept(Clock::now() + kPhaseLimit);
        if (!c) return;
        std::array<std::byte, kMsg> buf;
        while (c->ReadExactly(buf, Clock::now() + kPhaseLimit)) {
          if (!c->Write(buf)) break;
        }
        c->Close();
      });
      if (!server) {
        rc = 14;
        return;
      }
      server->Join();
      // Keep polling until the parent's stack no longer touches the port: 't' (go back to raw
      // echo), or EOF or an error (the parent is done or gone: exit).
      for (;;) {
        const ssize_t r = read(done_fd, &ch, 1);
        if (r < 0 && errno == EAGAIN) {
          sched::SleepFor(2ms);
          continue;
        }
        raw_again = r == 1 && ch == 't';
        break;
      }
      l->Close();
      rc = 0;
    });
  }
  if (rc != 0 || !raw_again) _exit(rc);
  // The stack is gone, the port stays started: echo raw frames again for the second floor.
  fcntl(done_fd, F_SETFL, 0);
  if (write(back_fd, "r", 1) != 1) _exit(18);
  if (!RawEcho(p)) _exit(19);
  while (read(done_fd, &ch, 1) > 0) {
  }  // EOF: the parent is done with the port
  _exit(0);
}

// RPCs/s with `window` 64-byte RPCs in flight on one connection (the server still answers
// one at a time): what one server core sustains, not bounded by one round trip per RPC.
double Pipelined(TcpConn& c, int n, int window, Deadline deadline, std::string_view what) {
  std::array<std::byte, kMsg> req{}, resp{};
  int sent = 0, got = 0;
  SoftBound bound(fmt::format("{}, {} in flight", what, window), n);
  const auto start = Clock::now();
  for (; sent < window && sent < n; ++sent) {
    if (auto w = c.Write(req, deadline); !w) Die(w.error().message());
  }
  for (; got < sent; ++got) {  // every RPC sent is read back, also after an early stop
    if (auto r = c.ReadExactly(resp, deadline); !r) Die(r.error().message());
    if (sent < n && !bound.Reached(got + 1)) {
      if (auto w = c.Write(req, deadline); !w) Die(w.error().message());
      ++sent;
    } else {
      n = sent;
    }
  }
  return got / std::chrono::duration<double>(Clock::now() - start).count();
}

int g_window = 16;

// --- phase 1: raw ping-pong ------------------------------------------------------------------

Result RunRaw(dpdk::Port& p, int warmup, int count, std::string name) {
  const auto end = Clock::now() + kPhaseLimit;
  std::vector<std::int64_t> ns;
  ns.reserve(count);
  std::array<rte_mbuf*, 32> rx;
  Clock::time_point start;
  SoftBound bound("raw memif ping-pong", count);
  for (int i = 0; i < warmup + count; ++i) {
    if (i == warmup) start = Clock::now();
    if (i > warmup && bound.Reached(i - warmup)) break;
    rte_mbuf* m = Frame(p, kPingType, static_cast<std::uint64_t>(i));
    const auto t0 = Clock::now();
    SendOne(p, m, end);
    bool got = false;
    while (!got) {
      const std::uint16_t n = rte_eth_rx_burst(p.id(), 0, rx.data(), rx.size());
      for (std::uint16_t k = 0; k < n; ++k) {
        std::uint64_t seq;
        std::memcpy(&seq, rte_pktmbuf_mtod(rx[k], const std::uint8_t*) + 14, sizeof(seq));
        if (TypeOf(rx[k]) == kPingType && seq == static_cast<std::uint64_t>(i)) got = true;
        rte_pktmbuf_free(rx[k]);
      }
      // A clock read on every empty poll is part of the fastest raw loop measured here: without
      // it the floor read ~15 ns higher (polling the ring's line harder delays the peer's store;
      // net.md, "fourth session").
      if (!got && Clock::now() > end) Die(fmt::format("raw: frame {} never came back", i));
    }
    if (i >= warmup) ns.push_back((Clock::now() - t0).count());
  }
  const auto total = Clock::now() - start;
  SendOne(p, Frame(p, kStopType, 0), end);
  // Wait for the stop frame's echo, so nothing raw is left in flight for the stack.
  for (bool got = false; !got;) {
    const std::uint16_t n = rte_eth_rx_burst(p.id(), 0, rx.data(), rx.size());
    for (std::uint16_t k = 0; k < n; ++k) {
      if (TypeOf(rx[k]) == kStopType) got = true;
      rte_pktmbuf_free(rx[k]);
    }
    if (!got && Clock::now() > end) Die("raw: the stop frame never came back");
  }
  return Summarise(std::move(name), ns, total);
}

// --- phase 2: TCP RPC on the dpdk stack --------------------------------------------------------

Result RunDpdkTcp(const StackOptions& o, int cpu, int warmup, int rpcs) {
  auto rt = sched::Runtime::Create(sched::RuntimeConfig{.cores = {cpu}});
  if (!rt) Die(rt.error().message());
  Result result;
  auto run = (*rt)->Run([&] {
    auto s = dpdk::DpdkStack::Create(o);
    if (!s) Die(s.error().message());
    Status<TcpConn> c = MakeError(ErrorCode::kUnavailable, "not tried");
    const auto end = Clock::now() + 10s;
    while (Clock::now() < end) {  // the child's listener may not be up yet
      c = (*s)->Connect(Endpoint{kChildIp, kRpcPort}, Clock::now() + 2s);
      if (c) break;
      sched::SleepFor(10ms);
    }
    if (!c) Die(fmt::format("dpdk: connect to the child: {}", c.error().message()));
    const Deadline deadline = Clock::now() + kPhaseLimit;
    std::array<std::byte, kMsg> req{}, resp{};
    std::vector<std::int64_t> ns;
    ns.reserve(rpcs);
    for (int i = 0; i < warmup; ++i) {
      if (!c->Write(req, deadline) || !c->ReadExactly(resp, deadline)) Die("dpdk warm-up RPC failed");
    }
    const NetCounters before = (*s)->counters().Total();
    SoftBound bound("dpdk TCP closed loop", rpcs);
    const auto start = Clock::now();
    for (int i = 0; i < rpcs && !bound.Reached(i); ++i) {
      const auto t0 = Clock::now();
      if (auto w = c->Write(req, deadline); !w) Die(w.error().message());
      if (auto r = c->ReadExactly(resp, deadline); !r) Die(r.error().message());
      ns.push_back((Clock::now() - t0).count());
    }
    result = Summarise("TCP RPC, dpdk stack over memif", ns, Clock::now() - start);
    const NetCounters after = (*s)->counters().Total();
    const double done = static_cast<double>(ns.size());
    fmt::print("dpdk closed loop, client side per RPC: {:.2f} frames out, {:.2f} in, "
               "{} retransmits\n",
               static_cast<double>(after.tx_packets - before.tx_packets) / done,
               static_cast<double>(after.rx_packets - before.rx_packets) / done,
               after.tcp_retransmits - before.tcp_retransmits);
    result.pipelined_per_s = Pipelined(*c, rpcs, g_window, deadline, "dpdk TCP");
    c->Close();
    sched::SleepFor(20ms);  // let the FIN exchange finish before the stack goes
  });
  if (!run) Die(run.error().message());
  return result;
}

// --- phase 3: TCP RPC on the kernel stack over loopback ----------------------------------------

Result RunKernelTcp(int cpu_client, int cpu_server, int warmup, int rpcs) {
  auto rt = sched::Runtime::Create(sched::RuntimeConfig{.cores = {cpu_client, cpu_server}});
  if (!rt) Die(rt.error().message());
  Result result;
  auto run = (*rt)->Run([&] {
    auto stack = CreateStack("kernel");
    if (!stack) Die(stack.error().message());
    auto listener = (*stack)->Listen(Endpoint{Ipv4Addr::Loopback(), 0});
    if (!listener) Die(listener.error().message());
    const Deadline deadline = Clock::now() + kPhaseLimit;
    auto server = sched::Spawn(
        [&] {
          auto c = listener->Accept(deadline);
          if (!c) Die(c.error().message());
          std::array<std::byte, kMsg> buf;
          while (c->ReadExactly(buf, deadline)) {
            if (!c->Write(buf, deadline)) break;
          }
        },
        {.core = 1, .stealable = false});
    auto client = sched::Spawn(
        [&] {
          auto c = (*stack)->Connect(listener->local_endpoint(), deadline);
          if (!c) Die(c.error().message());
          std::array<std::byte, kMsg> req{}, resp{};
          std::vector<std::int64_t> ns;
          ns.reserve(rpcs);
          for (int i = 0; i < warmup; ++i) {
            if (!c->Write(req, deadline) || !c->ReadExactly(resp, deadline)) {
              Die("kernel warm-up RPC failed");
            }
          }
          SoftBound bound("kernel TCP closed loop", rpcs);
          const auto start = Clock::now();
          for (int i = 0; i < rpcs && !bound.Reached(i); ++i) {
            const auto t0 = Clock::now();
            if (auto w = c->Write(req, deadline); !w) Die(w.error().message());
            if (auto r = c->ReadExactly(resp, deadline); !r) Die(r.error().message());
            ns.push_back((Clock::now() - t0).count());
          }
          result = Summarise("TCP RPC, kernel stack over loopback", ns, Clock::now() - start);
          result.pipelined_per_s = Pipelined(*c, rpcs, g_window, deadline, "kernel TCP");
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

int Arg(char** argv, int& i, int argc, int min = 100) {
  if (i + 1 >= argc) Die(fmt::format("{} needs a number", argv[i]));
  const int v = std::atoi(argv[++i]);
  if (v < min || v > 10'000'000) {
    Die(fmt::format("{} {}: use {}..10000000", argv[i - 1], v, min));
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int raw = 200000, rpcs = 100000, warmup = 10000;
  std::vector<int> cpus = sched::AllowedCpus();
  int cpu_a = cpus.empty() ? 0 : cpus[0];
  int cpu_b = cpus.size() > 1 ? cpus[1] : cpu_a;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--raw") {
      raw = Arg(argv, i, argc);
    } else if (a == "--rpcs") {
      rpcs = Arg(argv, i, argc);
    } else if (a == "--warmup") {
      warmup = Arg(argv, i, argc);
    } else if (a == "--window") {
      g_window = Arg(argv, i, argc, 1);
    } else if (a == "--idle-poll-max-us") {
      g_idle_poll_max_us = static_cast<std::uint32_t>(Arg(argv, i, argc, 16));
    } else if (a == "--cpus" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%d,%d", &cpu_a, &cpu_b) != 2) Die("--cpus A,B (two CPU numbers)");
    } else {
      Die("usage: junction_net_dpdk_rpc_bench [--raw N] [--rpcs N] [--warmup N] [--cpus A,B] "
          "[--window N] [--idle-poll-max-us N]");
    }
  }
  if (geteuid() != 0) Die("needs root (memif's control socket): run it with sudo");
  const std::string socket = fmt::format("/tmp/fn-memif-bench-{}.sock", getpid());
  unlink(socket.c_str());
  int done[2], ready[2], back[2];
  if (pipe(done) != 0 || pipe(ready) != 0 || pipe(back) != 0) Die("pipe failed");
  const pid_t child = fork();
  if (child < 0) Die("fork failed");
  if (child == 0) {
    close(done[1]);
    close(ready[1]);
    close(back[0]);
    Child(socket, cpu_b, ready[0], done[0], back[1]);
  }
  close(done[0]);
  close(ready[0]);
  close(back[1]);

  fmt::print("64-byte request/response, client/driver on cpu {}, server on cpu {}; {} raw round "
             "trips, {} RPCs per TCP path after {} warm-up; dpdk idle_poll_max_us {}\n",
             cpu_a, cpu_b, raw, rpcs, warmup, g_idle_poll_max_us);
  cpu_set_t allowed;  // the runtime checks its cores against the caller's mask: restore it
  pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed);
  Pin(cpu_a);
  const StackOptions o = MemifOptions(socket, true, kParentIp);
  dpdk::Port& p = *OpenPort(o);
  if (write(ready[1], "r", 1) != 1) Die("pipe write failed");
  close(ready[1]);
  if (!WaitLinkUp(p.id(), 10s)) Die("memif link never came up (did the child start?)");
  const Result r_raw = RunRaw(p, warmup, raw, "raw memif ping-pong, before");
  const Result r_dpdk = RunDpdkTcp(o, cpu_a, warmup, rpcs);
  // Our stack is gone: the child goes back to raw echo, and the floor is measured again.
  char ch;
  if (write(done[1], "t", 1) != 1) Die("pipe write failed");
  if (read(back[0], &ch, 1) != 1) Die("the memif child did not come back to raw echo");
  const Result r_raw2 = RunRaw(p, warmup, raw, "raw memif ping-pong, after");
  close(done[1]);  // done with the port: the child may stop polling and exit
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(fmt::format("the memif child failed (exit {})", WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  unlink(socket.c_str());
  pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
  const Result r_kernel = RunKernelTcp(cpu_a, cpu_b, warmup, rpcs);

  fmt::print("{:<38} {:>9} {:>9} {:>12} {:>14}\n", "path", "p50 us", "p99 us", "closed /s",
             fmt::format("{} in flight /s", g_window));
  for (const Result& r : {r_raw, r_dpdk, r_raw2, r_kernel}) {
    fmt::print("{:<38} {:>9.3f} {:>9.3f} {:>12.0f} {:>14.0f}\n", r.name, r.p50_us, r.p99_us,
               r.per_s, r.pipelined_per_s);
  }
  // The floor the latency ratios are against: the mean of the two raw phases, when they agree.
  const double floor_change = std::max(r_raw.p50_us, r_raw2.p50_us) / std::min(r_raw.p50_us, r_raw2.p50_us);
  const bool floor_steady = floor_change <= 1.25;
  const double raw_p50 = (r_raw.p50_us + r_raw2.p50_us) / 2;
  const double raw_p99 = (r_raw.p99_us + r_raw2.p99_us) / 2;
  const double p50x = r_dpdk.p50_us / raw_p50;
  const double p99x = r_dpdk.p99_us / raw_p99;
  const double ratex = r_dpdk.pipelined_per_s / r_kernel.pipelined_per_s;
  fmt::print("raw floor: p50 {:.2f} us before the dpdk TCP phase, {:.2f} us after ({})\n",
             r_raw.p50_us, r_raw2.p50_us,
             floor_steady ? "steady: the ratios below are against their mean"
                          : fmt::format("changed {:.2f}x during the run: the latency ratios are "
                                        "not comparable, rerun", floor_change));
  fmt::print("dpdk TCP / raw memif: p50 {:.2f}x (target <= 2), p99 {:.2f}x vs raw p99 (target "
             "<= 3; {:.2f}x vs raw p50)\n",
             p50x, p99x, r_dpdk.p99_us / raw_p50);
  fmt::print("dpdk TCP / kernel TCP: RPCs/s {:.2f}x with {} in flight (target >= 5), {:.2f}x "
             "closed loop; p50 {:.2f}x, p99 {:.2f}x\n",
             ratex, g_window, r_dpdk.per_s / r_kernel.per_s, r_dpdk.p50_us / r_kernel.p50_us,
             r_dpdk.p99_us / r_kernel.p99_us);
  auto verdict = [&](bool met) -> std::string {
    if (!floor_steady) return "not judged (the floor changed)";
    return met ? "met" : "NOT met";
  };
  fmt::print("targets: p50 {}, p99 {}, RPCs/s {}\n", verdict(p50x <= 2), verdict(p99x <= 3),
             ratex >= 5 ? "met" : "NOT met");
  return 0;
}
