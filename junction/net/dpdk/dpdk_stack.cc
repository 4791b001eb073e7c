// dpdk_stack.cc — start-up, shutdown and registration of the dpdk backend (see dpdk_stack.h).
#include "junction/net/dpdk/dpdk_stack.h"

#include <rte_cycles.h>
#include <sys/epoll.h>

#include <fmt/format.h>

#include <chrono>
#include <mutex>

#include "junction/net/dpdk/udp.h"
#include "junction/sched/core_hooks.h"
#include "junction/sched/runtime.h"

namespace junction::net::dpdk {
namespace {

Status<void> Validate(const DpdkOptions& o) {
  if (o.prefix_len < 1 || o.prefix_len > 32) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("net.dpdk.prefix_len = {}: use 1..32", o.prefix_len));
  }
  if (o.ip.is_any()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "net.dpdk.ip is 0.0.0.0: give the node's address on the port");
  }
  if (o.burst < 1 || o.burst > 64) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("net.dpdk.burst = {}: use 1..64", o.burst));
  }
  if (o.rx_descriptors < 64 || o.tx_descriptors < 64) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "net.dpdk.rx_descriptors / tx_descriptors: use at least 64");
  }
  if (o.idle_poll_max_us < 16) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "net.dpdk.idle_poll_max_us: use at least 16");
  }
  return FaultInjector::Validate(o.faults);
}

constexpr std::uint32_t kTickMinUs = 16;
constexpr std::uint32_t kTickWithIntrUs = 10'000;
constexpr std::uint32_t kTickHoldingMaxUs = 128;
// The ticker's period while the scheduler's poll hook (not the ticker) finds the traffic: the
// core is busy and the hook drains the port on every pass, so the ticker only has to be near
// for when the core goes idle. Not kTickMinUs: a tick costs a timer, two switches and a poll
// pass, every 16 us of a busy core otherwise.
constexpr std::uint32_t kTickBusyUs = 64;
// How often a memif port's link is looked at, off the cores, to populate the regions of a
// peer that has just connected (memif raises no link event).
constexpr std::chrono::milliseconds kMemifWatchPeriod{10};

}  // namespace

void RegisterDpdkStack() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)RegisterStack("dpdk", [](const StackOptions& o) -> Status<std::unique_ptr<Stack>> {
      auto s = DpdkStack::Create(o);
      if (!s) return std::unexpected(s.error());
      return std::unique_ptr<Stack>(std::move(*s));
    });
  });
}

Status<void> DpdkStack::OnEveryCore(const std::function<Status<void>(int)>& fn) {
  return sched::OnEveryCore(fn, sched::accounts::kNet);
}

Status<std::unique_ptr<DpdkStack>> DpdkStack::Create(const StackOptions& options) {
  sched::Runtime* rt = sched::Runtime::Current();
  if (rt == nullptr || !sched::InRuntime()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "dpdk stack: create it from a uthread inside Runtime::Run (it sets up a "
                     "queue pair on every core of the runtime)");
  }
  const DpdkOptions& o = options.dpdk;
  if (auto v = Validate(o); !v) return std::unexpected(v.error());
  auto eal = StartEal(o);
  if (!eal) return std::unexpected(eal.error());
  const int n = rt->num_cores();
  auto port = Port::Open(o, n);
  if (!port) return std::unexpected(port.error());

  std::unique_ptr<DpdkStack> stack(new DpdkStack(n));
  if ((*port)->unmaps_under_bursts()) {  // net_memif: see memif_prefault.h
    // No frame moves before the link is up; the peer's regions are new after each connection.
    stack->memif_watch_ = std::make_unique<MemifLinkWatcher>((*port)->id(), kMemifWatchPeriod);
  }
  stack->options_ = o;
  stack->eal_ = *eal;
  StackShared& sh = stack->shared_;
  sh.port = *port;
  sh.mac = (*port)->mac();
  sh.ip = o.ip;
  sh.netmask = o.prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> o.prefix_len);
  sh.gateway = o.gateway;
  sh.num_cores = n;
  sh.burst = o.burst;
  sh.tsc_hz = rte_get_tsc_hz();
  sh.counters = stack->mutable_counters();
  sh.cores.assign(n, nullptr);
  sh.udp_owner.reset(new std::atomic<std::int16_t>[65536]);
  sh.udp_sock.reset(new std::atomic<UdpSock*>[65536]);
  for (int p = 0; p < 65536; ++p) {
    sh.udp_owner[p].store(-1, std::memory_order_relaxed);
    sh.udp_sock[p].store(nullptr, std::memory_order_relaxed);
  }
  stack->cores_.resize(n);

  // Every core: EAL registration and its CoreNet (all before any hook polls).
  auto built = stack->OnEveryCore([&](int i) -> Status<void> {
    if (auto r = RegisterThisThread(); !r) return r;
    auto c = CoreNet::Create(&sh, i, o);
    if (!c) return std::unexpected(c.error());
    stack->cores_[i] = std::shared_ptr<CoreNet>(std::move(*c));
    sh.cores[i] = stack->cores_[i].get();
    return {};
  });
  if (!built) return std::unexpected(built.error());
  // TCP: one engine per core, each sending through its core's CoreNet.
  tcp::EngineOptions eo;
  eo.local_addr = o.ip;
  eo.num_cores = n;
  eo.net_counters = stack->mutable_counters();
  std::vector<tcp::TcpTx*> tx;
  for (auto& c : stack->cores_) tx.push_back(c.get());
  auto svc = tcp::TcpService::Create(eo, tx, stack->mutable_counters());
  if (!svc) return std::unexpected(svc.error());
  stack->tcp_ = std::move(*svc);
  for (int i = 0; i < n; ++i) stack->cores_[i]->set_tcp_sink(&stack->tcp_->engine(i));
  // Then the hooks and tickers.
  auto hooked = stack->OnEveryCore([&](int i) -> Status<void> {
    std::shared_ptr<CoreNet> c = stack->cores_[i];
    sched::AddPollHook([c] { c->Poll(sched::PollPassTsc()); });
    const int fd = sh.port->rx_intr_fd(i);
    if (fd >= 0) {
      if (auto r = sched::AddIdleFd(fd, EPOLLIN, [c](std::uint32_t) { c->Poll(); }); !r) {
        return r;
      }
    }
    return {};
  });
  if (!hooked) {
    for (auto& c : stack->cores_) c->Stop();
    return std::unexpected(hooked.error());
  }
  for (int i = 0; i < n; ++i) {
    CoreNet* c = stack->cores_[i].get();
    const bool intr = sh.port->rx_intr_fd(i) >= 0;
    const std::uint32_t max_us = o.idle_poll_max_us;
    std::atomic<bool>* stopping = &stack->stopping_;
    tcp::Engine* engine = &stack->tcp_->engine(i);
    auto h = sched::Spawn(
        [c, intr, max_us, stopping, engine] {
          std::uint32_t period = intr ? kTickWithIntrUs : kTickMinUs;
          std::uint64_t seen = c->busy_polls();
          while (!stopping->load(std::memory_order_relaxed)) {
            std::uint32_t sleep_us = period;
            const std::int64_t due_us = (engine->NextTimerNs() - sched::MonoNs()) / 1000;
            if (due_us < static_cast<std::int64_t>(sleep_us)) {
              sleep_us = due_us < static_cast<std::int64_t>(kTickMinUs)
                             ? kTickMinUs
                             : static_cast<std::uint32_t>(due_us);
            }
            sched::SleepFor(std::chrono::microseconds(sleep_us));
            // Work done since the last tick by any pass counts: while the core is busy the
            // scheduler's poll hook drains the port and this tick finds it empty, and
            // backing off on that would leave the next idle gap with a sleep of up to
            // max_us before the port is looked at again (a 2 ms tail at moderate rates).
            const bool own = c->Poll() > 0;
            const std::uint64_t polls = c->busy_polls();
            const bool handled = polls != seen;
            seen = polls;
            if (c->holding()) {
              // Frames wait for a later pass (a full TX ring, the fault injector): retry at
              // once while they move, and back off only to kTickHoldingMaxUs while they do
              // not (a stuck peer costs a slow poll, not an idle back-off's latency).
              period = handled ? kTickMinUs : std::min(period * 2, kTickHoldingMaxUs);
            } else if (intr) {
              period = kTickWithIntrUs;
            } else {
              period = own       ? kTickMinUs
                       : handled ? std::min(kTickBusyUs, max_us)
                                 : std::min(period * 2, max_us);
            }
          }
        },
        {.core = i, .account = sched::accounts::kNet, .stealable = false});
    if (h) stack->tickers_.push_back(std::move(*h));
  }
  return stack;
}

Status<void> DpdkStack::PrimeConnections(std::size_t connections_per_core,
                                         std::size_t bytes_per_ring) {
  if (shared_.port->unmaps_under_bursts()) {  // net_memif
    if (auto r = PrefaultMemifRegions(); !r) return std::unexpected(r.error());
  }
  return OnEveryCore([&](int i) -> Status<void> {
    tcp_->engine(i).PrimeBuffers(connections_per_core, bytes_per_ring);
    return {};
  });
}

DpdkStack::~DpdkStack() {
  if (!sched::InRuntime()) return;  // the runtime is gone: so are the hooks and tickers
  stopping_.store(true);
  for (auto& h : tickers_) h.Join();
  (void)OnEveryCore([&](int i) -> Status<void> {
    if (cores_[i]) {
      cores_[i]->set_tcp_sink(nullptr);
      cores_[i]->Stop();
    }
    return {};
  });
  tcp_.reset();  // after the hooks stopped calling the engines
}

Status<void> DpdkStack::SetFaults(const DpdkFaultOptions& faults) {
  if (auto v = FaultInjector::Validate(faults); !v) return v;
  return OnEveryCore([&](int i) -> Status<void> {
    cores_[i]->SetFaults(faults);
    return {};
  });
}

FaultStats DpdkStack::fault_stats() {
  FaultStats t;
  for (auto& c : cores_) {
    for (const FaultStats& s : {c->rx_fault_stats(), c->tx_fault_stats()}) {
      t.seen += s.seen;
      t.dropped += s.dropped;
      t.duplicated += s.duplicated;
      t.reordered += s.reordered;
      t.delayed += s.delayed;
    }
  }
  return t;
}

Status<TcpListener> DpdkStack::DoListen(Endpoint local, const ListenOptions& options) {
  return tcp_->Listen(local, options);
}

Status<TcpConn> DpdkStack::DoConnect(Endpoint remote, Deadline deadline) {
  return tcp_->Connect(remote, deadline);
}

Status<UdpSocket> DpdkStack::DoBindUdp(Endpoint local) { return dpdk::BindUdp(*this, local); }

}  // namespace junction::net::dpdk
