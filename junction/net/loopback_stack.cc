// loopback_stack.cc — the loopback backend's stack, listeners and connections.
#include "junction/net/loopback_stack.h"

#include <cerrno>

#include <fmt/format.h>

#include "junction/net/loopback_registry.h"
#include "junction/net/net_error.h"
#include "junction/sched/runtime.h"

namespace junction::net {
namespace loopback {

void ConnPair::Close(int side, bool abort) {
  Pipe& o = out(side);
  Pipe& i = in(side);
  o.CloseWrite();
  if (abort || i.HasUnread()) {
    o.Reset();          // the peer's reads end in a reset, not EOF
    i.CloseRead(true);  // the peer's writes fail with a reset
  } else {
    i.CloseRead(false);  // the peer's writes fail with a broken pipe
  }
}

namespace {

class LoopbackConn final : public TcpConnImpl {
 public:
  LoopbackConn(std::shared_ptr<ConnPair> pair, int side) : pair_(std::move(pair)), side_(side) {}
  ~LoopbackConn() override { Close(); }

  Status<std::size_t> Read(std::span<std::byte> buf, Deadline deadline) override {
    const PipeResult r = pair_->in(side_).Read(buf, deadline);
    if (r.status == PipeStatus::kOk) return r.bytes;
    return std::unexpected(ToError(r.status, "TcpConn::Read"));
  }

  Status<void> Write(std::span<const std::byte> buf, Deadline deadline) override {
    const PipeResult r = pair_->out(side_).Write(buf, deadline);
    if (r.status == PipeStatus::kOk) return {};
    return std::unexpected(ToError(r.status, "TcpConn::Write"));
  }

  Status<void> ShutdownWrite() override {
    pair_->out(side_).CloseWrite();
    return {};
  }

  void Close() override {
    if (closed_) return;
    closed_ = true;
    pair_->Close(side_, /*abort=*/false);
  }

  Endpoint local_endpoint() const override { return pair_->ends[side_]; }
  Endpoint remote_endpoint() const override { return pair_->ends[1 - side_]; }

 private:
  Error ToError(PipeStatus s, std::string_view op) const {
    const std::string what =
        fmt::format("{} {} -> {}", op, local_endpoint().ToString(), remote_endpoint().ToString());
    switch (s) {
      case PipeStatus::kTimedOut:
        return TimedOutError(what);
      case PipeStatus::kReset:
        return ResetError(what, ECONNRESET);
      case PipeStatus::kBrokenPipe:
        return ResetError(what, EPIPE);
      case PipeStatus::kClosed:
      case PipeStatus::kOk:
        break;
    }
    return ClosedError(what);
  }

  std::shared_ptr<ConnPair> pair_;
  const int side_;
  bool closed_ = false;
};

class LoopbackListener final : public TcpListenerImpl {
 public:
  LoopbackListener(std::shared_ptr<Registry> reg, std::shared_ptr<ListenState> state,
                   NetCounterSet* counters)
      : reg_(std::move(reg)), state_(std::move(state)), counters_(counters) {}
  ~LoopbackListener() override { Close(); }

  Status<TcpConn> Accept(Deadline deadline) override {
    const std::int64_t deadline_ns = ToDeadlineNs(deadline);
    ListenState& s = *state_;
    s.lock.lock();
    for (;;) {
      if (s.closed) {
        s.lock.unlock();
        return std::unexpected(ClosedError(fmt::format("Accept on {}", s.local.ToString())));
      }
      if (!s.pending.empty()) {
        std::shared_ptr<ConnPair> pair = std::move(s.pending.front());
        s.pending.pop_front();
        sched::detail::Thread* c = s.connectors.PopWaiter();
        s.lock.unlock();
        if (c != nullptr) sched::Ready(c);
        return TcpConn(std::make_unique<LoopbackConn>(std::move(pair), 1), counters_);
      }
      if (!s.acceptors.Wait(deadline_ns)) {
        return std::unexpected(TimedOutError(fmt::format("Accept on {}", s.local.ToString())));
      }
      s.lock.lock();
    }
  }

  Endpoint local_endpoint() const override { return state_->local; }

  void Close() override {
    {
      std::lock_guard l(reg_->lock);
      auto it = reg_->listeners.find(state_->local);
      if (it != reg_->listeners.end() && it->second == state_) reg_->listeners.erase(it);
    }
    ListenState& s = *state_;
    s.lock.lock();
    if (s.closed) {
      s.lock.unlock();
      return;
    }
    s.closed = true;
    std::deque<std::shared_ptr<ConnPair>> pending = std::move(s.pending);
    sched::detail::Thread* a = s.acceptors.PopAll();
    sched::detail::Thread* c = s.connectors.PopAll();
    s.lock.unlock();
    sched::WaitQueue::ReadyAll(a);
    sched::WaitQueue::ReadyAll(c);
    // Connections that completed their handshake but were never accepted: the kernel resets
    // them when the listener closes, so do we.
    for (auto& p : pending) p->Close(1, /*abort=*/true);
  }

 private:
  std::shared_ptr<Registry> reg_;
  std::shared_ptr<ListenState> state_;
  NetCounterSet* counters_;
};

class LoopbackStack final : public Stack {
 public:
  LoopbackStack(const StackOptions& options, int num_cores)
      : Stack(num_cores), reg_(std::make_shared<Registry>(options)) {}

  std::string_view name() const override { return "loopback"; }

 protected:
  Status<TcpListener> DoListen(Endpoint local, const ListenOptions& options) override {
    std::shared_ptr<ListenState> state;
    {
      std::lock_guard l(reg_->lock);
      if (local.port == 0) {
        local.port = reg_->FreePortLocked(reg_->listeners, local.addr);
        if (local.port == 0) {
          return MakeError(ErrorCode::kResourceExhausted,
                           "Listen: the loopback stack has no free port left; close listeners");
        }
      } else if (CollidesLocked(reg_->listeners, local)) {
        return std::unexpected(AddressInUseError(fmt::format("Listen {}", local.ToString())));
      }
      state = std::make_shared<ListenState>(local, static_cast<std::size_t>(options.backlog));
      reg_->listeners.emplace(local, state);
    }
    return TcpListener(
        std::make_unique<LoopbackListener>(reg_, std::move(state), mutable_counters()),
        mutable_counters());
  }

  Status<TcpConn> DoConnect(Endpoint remote, Deadline deadline) override {
    const std::string what = fmt::format("Connect {}", remote.ToString());
    std::shared_ptr<ListenState> ls;
    Endpoint client{remote.addr, 0};
    {
      std::lock_guard l(reg_->lock);
      ls = FindLocked(reg_->listeners, remote);
      client.port = reg_->next_port;
      reg_->next_port = reg_->next_port == 65535 ? 49152 : reg_->next_port + 1;
    }
    if (ls == nullptr) return std::unexpected(RefusedError(what));
    auto pair = std::make_shared<ConnPair>(reg_->options.loopback_pipe_bytes, client,
                                           Endpoint{remote.addr, ls->local.port});
    const std::int64_t deadline_ns = ToDeadlineNs(deadline);
    ls->lock.lock();
    for (;;) {
      if (ls->closed) {
        ls->lock.unlock();
        return std::unexpected(RefusedError(what));
      }
      if (ls->pending.size() < ls->backlog) {
        ls->pending.push_back(pair);
        sched::detail::Thread* a = ls->acceptors.PopWaiter();
        ls->lock.unlock();
        if (a != nullptr) sched::Ready(a);
        return TcpConn(std::make_unique<LoopbackConn>(std::move(pair), 0), mutable_counters());
      }
      if (!ls->connectors.Wait(deadline_ns)) {
        return std::unexpected(TimedOutError(what + " (the listener's backlog stayed full)"));
      }
      ls->lock.lock();
    }
  }

  Status<UdpSocket> DoBindUdp(Endpoint local) override {
    return loopback::BindUdp(reg_, mutable_counters(), local);
  }

 private:
  std::shared_ptr<Registry> reg_;
};

}  // namespace
}  // namespace loopback

Status<std::unique_ptr<Stack>> CreateLoopbackStack(const StackOptions& options) {
  sched::Runtime* rt = sched::Runtime::Current();
  const int cores = rt != nullptr ? rt->num_cores() : 1;
  return std::unique_ptr<Stack>(std::make_unique<loopback::LoopbackStack>(options, cores));
}

}  // namespace junction::net
