// tcp_socket.cc — the socket adapters over the engines: operations marshalled to the owning
// core, waits parked on the connection's IoWaiters (see tcp_socket.h).
#include "junction/net/tcp/tcp_socket.h"

#include <fmt/format.h>

#include <optional>

#include "junction/net/net_error.h"
#include "junction/sched/sched.h"
#include "junction/sched/spinlock.h"
#include "junction/sched/wait_queue.h"

namespace junction::net::tcp {

namespace {

// Runs fn() on `core`: inline when the caller is there, else on a uthread spawned there and
// joined. fn must not block (engine calls never do). R is a Status<...> or an optional of one.
template <typename F>
auto RunOn(int core, F&& fn) -> decltype(fn()) {
  using R = decltype(fn());
  // Inline on the owner; and outside the runtime (a handle destroyed after Run returned),
  // where no core polls any more and nothing else touches the engine.
  if (sched::CurrentCore() == core || !sched::InRuntime()) return fn();
  std::optional<R> r;
  for (;;) {
    auto h = sched::Spawn([&] { r.emplace(fn()); }, sched::SpawnOptions{.core = core, .stealable = false});
    if (h) {
      h->Join();
      return std::move(*r);
    }
    sched::Yield();  // out of stacks for a moment: try again (the operation must happen)
  }
}

Endpoint LocalOf(const FourTuple& t) { return Endpoint{t.local_addr, t.local_port}; }
Endpoint RemoteOf(const FourTuple& t) { return Endpoint{t.remote_addr, t.remote_port}; }

class EngineConn final : public TcpConnImpl {
 public:
  EngineConn(TcpService* svc, int core, Conn* c)
      : svc_(svc), core_(core), c_(c), tuple_(svc->engine(core).tuple(c)) {}
  ~EngineConn() override { Close(); }

  Status<std::size_t> Read(std::span<std::byte> buf, Deadline deadline) override {
    if (closed_) return std::unexpected(ClosedError("Read on a closed connection"));
    Engine& e = svc_->engine(core_);
    IoWaiter& w = e.read_waiter(c_);
    for (;;) {
      const std::uint64_t seen = w.epoch();
      // nullopt: nothing to read yet (RecvReady), told without building kWouldBlock's error.
      auto r = RunOn(core_, [&]() -> std::optional<Status<std::size_t>> {
        if (!buf.empty() && !e.RecvReady(c_)) return std::nullopt;
        auto got = e.Recv(c_, buf);  // may open the window: a window update to send
        e.FlushTx();
        return got;
      });
      if (r) {
        Status<std::size_t>& got = *r;
        if (got || got.error().code() != ErrorCode::kWouldBlock) return std::move(got);
      }
      if (auto s = Wait(w, seen, deadline, "Read"); !s) return std::unexpected(s.error());
    }
  }

  Status<void> Write(std::span<const std::byte> buf, Deadline deadline) override {
    if (closed_) return std::unexpected(ClosedError("Write on a closed connection"));
    Engine& e = svc_->engine(core_);
    IoWaiter& w = e.write_waiter(c_);
    while (!buf.empty()) {
      const std::uint64_t seen = w.epoch();
      auto r = RunOn(core_, [&] {
        auto sent = e.Send(c_, buf);
        e.FlushTx();
        return sent;
      });
      if (r) {
        buf = buf.subspan(*r);
        continue;
      }
      if (r.error().code() != ErrorCode::kWouldBlock) return std::unexpected(r.error());
      if (auto s = Wait(w, seen, deadline, "Write"); !s) return std::unexpected(s.error());
    }
    return {};
  }

  Status<void> ShutdownWrite() override {
    if (closed_) return std::unexpected(ClosedError("ShutdownWrite on a closed connection"));
    Engine& e = svc_->engine(core_);
    return RunOn(core_, [&] {
      auto s = e.Shutdown(c_);
      e.FlushTx();
      return s;
    });
  }

  void Close() override {
    if (closed_) return;
    closed_ = true;
    Engine& e = svc_->engine(core_);
    (void)RunOn(core_, [&]() -> Status<void> {
      e.Close(c_);
      e.FlushTx();
      return {};
    });
  }

  Endpoint local_endpoint() const override { return LocalOf(tuple_); }
  Endpoint remote_endpoint() const override { return RemoteOf(tuple_); }

 private:
  Status<void> Wait(IoWaiter& w, std::uint64_t seen, Deadline deadline, std::string_view op) {
    switch (w.Wait(seen, deadline)) {
      case IoWaiter::kReady: return {};
      case IoWaiter::kTimedOut:
        return std::unexpected(TimedOutError(fmt::format("{} {} -> {}", op, LocalOf(tuple_).ToString(),
                                                         RemoteOf(tuple_).ToString())));
      case IoWaiter::kBusy: break;
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: another uthread is already waiting in {} on this connection; "
                                 "use one reader and one writer at a time", op, op));
  }

  TcpService* svc_;
  int core_;
  Conn* c_;
  FourTuple tuple_;
  bool closed_ = false;
};

// Shared by a listener and the engines' notifications. Acceptors park in `waiters`.
struct AcceptState final : AcceptNotify {
  explicit AcceptState(int n) : ready(static_cast<std::size_t>(n)) {}
  void Ready(int core) override {
    auto& r = ready[static_cast<std::size_t>(core)];
    r.store(r.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    WakeAll();
  }
  void WakeAll() {
    lock.lock();
    epoch.fetch_add(1, std::memory_order_seq_cst);
    sched::detail::Thread* list = waiters.PopAll();
    lock.unlock();
    sched::WaitQueue::ReadyAll(list);
  }
  sched::Spinlock lock;
  sched::WaitQueue waiters{&lock};
  std::atomic<std::uint64_t> epoch{0};
  std::atomic<bool> closed{false};
  // Connections each core announced; a hint (decremented by the acceptor that takes one).
  std::vector<std::atomic<std::int64_t>> ready;
};

class EngineListener final : public TcpListenerImpl {
 public:
  EngineListener(TcpService* svc, Endpoint local) : svc_(svc), local_(local), state_(svc->num_cores()) {}
  ~EngineListener() override { Close(); }

  Status<void> Open(int backlog) {
    for (int i = 0; i < svc_->num_cores(); ++i) {
      auto s = RunOn(i, [&] { return svc_->engine(i).Listen(local_, backlog, &state_); });
      if (!s) return s;
      listening_ = i + 1;
    }
    return {};
  }

  Status<TcpConn> Accept(Deadline deadline) override {
    const std::int64_t deadline_ns = deadline == Deadline::max() ? INT64_MAX : sched::DeadlineNs(deadline);
    const int n = svc_->num_cores();
    for (;;) {
      if (state_.closed.load(std::memory_order_acquire)) {
        return std::unexpected(ClosedError(fmt::format("Accept on {}", local_.ToString())));
      }
      const std::uint64_t seen = state_.epoch.load(std::memory_order_seq_cst);
      const int first = sched::CurrentCore() < 0 ? 0 : sched::CurrentCore() % n;
      for (int k = 0; k < n; ++k) {
        const int i = (first + k) % n;
        auto& hint = state_.ready[static_cast<std::size_t>(i)];
        if (hint.load(std::memory_order_seq_cst) <= 0) continue;
        Engine& e = svc_->engine(i);
        auto c = RunOn(i, [&]() -> Status<Conn*> {
          Conn* got = e.Accept(local_.port);
          if (got != nullptr) hint.store(hint.load(std::memory_order_relaxed) - 1, std::memory_order_seq_cst);
          return got;
        });
        if (*c != nullptr) {
          return TcpConn(std::make_unique<EngineConn>(svc_, i, *c), svc_->net_counters());
        }
        // Announced but gone (reset before Accept): forget the hint.
        RunOn(i, [&]() -> Status<void> {
          if (hint.load(std::memory_order_relaxed) > 0) hint.store(0, std::memory_order_seq_cst);
          return {};
        });
      }
      state_.lock.lock();
      if (state_.epoch.load(std::memory_order_seq_cst) != seen || state_.closed.load(std::memory_order_acquire)) {
        state_.lock.unlock();
        continue;
      }
      if (!state_.waiters.Wait(deadline_ns)) {
        return std::unexpected(TimedOutError(fmt::format("Accept on {}", local_.ToString())));
      }
    }
  }

  Endpoint local_endpoint() const override { return local_; }

  void Close() override {
    if (state_.closed.exchange(true, std::memory_order_acq_rel)) return;
    state_.WakeAll();
    for (int i = 0; i < listening_; ++i) {
      (void)RunOn(i, [&]() -> Status<void> {
        svc_->engine(i).Unlisten(local_.port);
        return {};
      });
    }
    svc_->ReleasePort(local_.port);
  }

 private:
  TcpService* svc_;
  Endpoint local_;
  AcceptState state_;
  int listening_ = 0;
};

}  // namespace

Status<std::unique_ptr<TcpService>> TcpService::Create(const EngineOptions& base,
                                                       std::vector<TcpTx*> tx,
                                                       NetCounterSet* counters) {
  if (tx.empty()) return MakeError(ErrorCode::kInvalidArgument, "TcpService: no cores; give one TcpTx per core");
  std::unique_ptr<TcpService> s(new TcpService());
  s->counters_ = counters;
  s->local_addr_ = base.local_addr;
  for (std::size_t i = 0; i < tx.size(); ++i) {
    if (tx[i] == nullptr) {
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("TcpService: core {} has no TcpTx", i));
    }
    EngineOptions o = base;
    if (o.net_counters == nullptr) o.net_counters = counters;
    o.core = static_cast<int>(i);
    o.num_cores = static_cast<int>(tx.size());
    if (o.iss_secret != 0) o.iss_secret += i;
    s->engines_.push_back(std::make_unique<Engine>(o, tx[i]));
  }
  return s;
}

TcpService::~TcpService() = default;

void TcpService::ReleasePort(std::uint16_t port) {
  std::lock_guard l(ports_mu_);
  listen_ports_.erase(port);
}

Status<TcpListener> TcpService::Listen(Endpoint local, const ListenOptions& options) {
  if (!local.addr.is_any() && local.addr != local_addr_) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("Listen {}: this stack's address is {}; listen on it or on 0.0.0.0",
                                 local.ToString(), local_addr_.ToString()));
  }
  {
    std::lock_guard l(ports_mu_);
    if (local.port == 0) {
      for (std::uint32_t p = 32768; p < 49152; ++p) {  // below the ephemeral range Connect uses
        if (!listen_ports_.contains(static_cast<std::uint16_t>(p))) {
          local.port = static_cast<std::uint16_t>(p);
          break;
        }
      }
      if (local.port == 0) return MakeError(ErrorCode::kResourceExhausted, "Listen: no free port in 32768-49151");
    }
    if (!listen_ports_.insert(local.port).second) {
      return std::unexpected(AddressInUseError(fmt::format("Listen {}", local.ToString())));
    }
  }
  if (local.addr.is_any()) local.addr = local_addr_;
  auto impl = std::make_unique<EngineListener>(this, local);
  if (auto s = impl->Open(options.backlog); !s) {
    impl->Close();
    return std::unexpected(s.error());
  }
  return TcpListener(std::move(impl), counters_);
}

Status<TcpConn> TcpService::Connect(Endpoint remote, Deadline deadline) {
  const int core = sched::CurrentCore() >= 0 && sched::CurrentCore() < num_cores() ? sched::CurrentCore() : 0;
  Engine& e = engine(core);
  auto c = RunOn(core, [&] {
    auto conn = e.Connect(remote);
    e.FlushTx();  // the SYN leaves now
    return conn;
  });
  if (!c) return std::unexpected(c.error());
  Conn* conn = *c;
  IoWaiter& w = e.write_waiter(conn);
  for (;;) {
    const std::uint64_t seen = w.epoch();
    auto r = RunOn(core, [&] { return e.ConnectResult(conn); });
    if (r) break;
    if (r.error().code() != ErrorCode::kWouldBlock || w.Wait(seen, deadline) != IoWaiter::kReady) {
      (void)RunOn(core, [&]() -> Status<void> {
        e.Abort(conn);
        e.Close(conn);
        return {};
      });
      if (r.error().code() != ErrorCode::kWouldBlock) return std::unexpected(r.error());
      return std::unexpected(TimedOutError(fmt::format("Connect to {}", remote.ToString())));
    }
  }
  return TcpConn(std::make_unique<EngineConn>(this, core, conn), counters_);
}

TcpCounterSnapshot TcpService::counters() const {
  TcpCounterSnapshot s;
  for (const auto& e : engines_) s += e->counters().Snapshot();
  return s;
}

}  // namespace junction::net::tcp
