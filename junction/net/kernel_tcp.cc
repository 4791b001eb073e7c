// kernel_tcp.cc — kernel-backend TCP: non-blocking sockets that park on EAGAIN, per-core
// SO_REUSEPORT listeners.
#include "junction/net/kernel_tcp.h"

#include <atomic>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <vector>

#include "junction/net/io_waiter.h"
#include "junction/net/kernel_socket.h"
#include "junction/net/net_error.h"
#include "junction/sched/spinlock.h"
#include "junction/sched/wait_queue.h"

namespace junction::net::kernel {
namespace {

constexpr std::uint32_t kConnEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP;

// What the poller sees of a connection: its fd and the two directions' waiters. Outlives the
// KernelConn by up to one poller pass (see CorePoller::Retire).
struct ConnTarget final : PollTarget {
  explicit ConnTarget(int f) : fd(f) {}
  void OnEvents(std::uint32_t ev) override {
    // Before the Notify: a reader that sees the epoch move sees this too (KernelConn::Read).
    if (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) rd_hup.store(true, std::memory_order_relaxed);
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) rd.Notify();
    if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) wr.Notify();
  }
  int fd;
  // The peer's FIN, a reset or an error has been seen: a short recv may then have stopped at
  // the end of the stream, whose edge came before it, so the next Read must ask the kernel.
  std::atomic<bool> rd_hup{false};
  alignas(64) IoWaiter rd;
  alignas(64) IoWaiter wr;
};

class KernelConn final : public TcpConnImpl {
 public:
  // Takes ownership of `target` (whose fd is registered in `poller`). `remote` is kept: the
  // kernel forgets the peer's address once the connection is reset.
  KernelConn(ConnTarget* target, CorePoller* poller, Endpoint remote)
      : t_(target), poller_(poller), remote_(remote) {}
  ~KernelConn() override { Close(); }

  Status<std::size_t> Read(std::span<std::byte> buf, Deadline deadline) override {
    for (;;) {
      const std::uint64_t seen = t_->rd.epoch();
      // The last recv returned short, so it emptied the receive queue, and no readiness
      // edge has come since: a recv now would only say EAGAIN (one system call per request
      // under keep-alive). Edge-triggered epoll reports any byte that arrived after that
      // recv, so waiting for the edge loses nothing. Not after a FIN or an error: their edge
      // may predate the short recv, which then stopped at them.
      const bool drained =
          drained_ && seen == drained_epoch_ && !t_->rd_hup.load(std::memory_order_relaxed);
      drained_ = false;
      if (drained) {
        if (auto s = Park(t_->rd, seen, deadline, "TcpConn::Read"); !s) {
          return std::unexpected(s.error());
        }
        continue;
      }
      const ssize_t n = ::recv(t_->fd, buf.data(), buf.size(), 0);
      if (n > 0 && static_cast<std::size_t>(n) < buf.size()) {
        drained_ = true;
        drained_epoch_ = seen;
      }
      if (n >= 0) return static_cast<std::size_t>(n);
      const int e = errno;
      if (e == EINTR) continue;
      if (e != EAGAIN && e != EWOULDBLOCK) {
        return std::unexpected(OsError(Describe("TcpConn::Read"), e));
      }
      if (auto s = Park(t_->rd, seen, deadline, "TcpConn::Read"); !s) {
        return std::unexpected(s.error());
      }
    }
  }

  Status<void> Write(std::span<const std::byte> buf, Deadline deadline) override {
    if (write_shut_) return std::unexpected(ClosedError("TcpConn::Write after ShutdownWrite"));
    std::size_t off = 0;
    while (off < buf.size()) {
      const std::uint64_t seen = t_->wr.epoch();
      const ssize_t n = ::send(t_->fd, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
      if (n >= 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      const int e = errno;
      if (e == EINTR) continue;
      if (e != EAGAIN && e != EWOULDBLOCK) {
        return std::unexpected(OsError(Describe("TcpConn::Write"), e));
      }
      if (auto s = Park(t_->wr, seen, deadline, "TcpConn::Write"); !s) {
        return std::unexpected(s.error());
      }
    }
    return {};
  }

  Status<void> ShutdownWrite() override {
    if (write_shut_) return {};
    if (::shutdown(t_->fd, SHUT_WR) != 0) {
      const int e = errno;
      // The peer already reset the connection: nothing left to shut down.
      if (e != ENOTCONN) return std::unexpected(OsError(Describe("TcpConn::ShutdownWrite"), e));
    }
    write_shut_ = true;
    return {};
  }

  void Close() override {
    if (t_ == nullptr) return;
    poller_->Remove(t_->fd);
    ::close(t_->fd);
    t_->fd = -1;
    poller_->Retire(t_);
    t_ = nullptr;
  }

  Endpoint local_endpoint() const override { return LocalEndpointOf(t_->fd); }
  Endpoint remote_endpoint() const override { return remote_; }

  // For Connect: the handshake completes as a write-readiness edge.
  IoWaiter& WriteWaiter() { return t_->wr; }

 private:
  Status<void> Park(IoWaiter& w, std::uint64_t seen, Deadline deadline, const char* op) {
    switch (w.Wait(seen, deadline)) {
      case IoWaiter::kReady:
        return {};
      case IoWaiter::kTimedOut:
        return std::unexpected(TimedOutError(Describe(op)));
      case IoWaiter::kBusy:
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("{}: another uthread is already waiting in this direction "
                                     "of the connection; use one reader and one writer",
                                     Describe(op)));
    }
    return {};
  }

  std::string Describe(std::string_view op) const {
    return fmt::format("{} {} -> {}", op, LocalEndpointOf(t_->fd).ToString(), remote_.ToString());
  }

  ConnTarget* t_;
  CorePoller* poller_;
  const Endpoint remote_;
  bool write_shut_ = false;  // the writer's own flag (one writer at a time)
  // The reader's own: the last recv came back short at read-waiter epoch drained_epoch_.
  bool drained_ = false;
  std::uint64_t drained_epoch_ = 0;
};

// Registers `fd` (connected or connecting, non-blocking) in the caller's core's poller.
Status<std::unique_ptr<KernelConn>> Adopt(KernelStack& stack, int fd, Endpoint remote) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    const int e = errno;
    ::close(fd);
    return std::unexpected(OsError("setting TCP_NODELAY", e));
  }
  CorePoller& poller = stack.local_poller();
  auto* target = new ConnTarget(fd);
  if (auto s = poller.Add(fd, kConnEvents, target); !s) {
    ::close(fd);
    delete target;  // never registered: nobody else can see it
    return std::unexpected(s.error());
  }
  return std::make_unique<KernelConn>(target, &poller, remote);
}

// --- listeners -------------------------------------------------------------------------------

// Shared by a listener and its per-core sockets' poll targets (which may outlive it by a
// poller pass). Acceptors wait in `waiters`; every readiness edge bumps `epoch` and wakes all.
struct AcceptState {
  sched::Spinlock lock;
  sched::WaitQueue waiters{&lock};
  std::atomic<std::uint64_t> epoch{0};
  std::atomic<bool> closed{false};

  void WakeAll() {
    lock.lock();
    epoch.fetch_add(1, std::memory_order_seq_cst);
    sched::detail::Thread* list = waiters.PopAll();
    lock.unlock();
    sched::WaitQueue::ReadyAll(list);
  }
};

struct ListenTarget final : PollTarget {
  ListenTarget(int f, std::shared_ptr<AcceptState> s) : fd(f), state(std::move(s)) {}
  void OnEvents(std::uint32_t) override { state->WakeAll(); }
  int fd;
  std::shared_ptr<AcceptState> state;
};

class KernelListener final : public TcpListenerImpl {
 public:
  KernelListener(KernelStack* stack, Endpoint local, std::shared_ptr<AcceptState> state)
      : stack_(stack), local_(local), state_(std::move(state)) {}

  ~KernelListener() override {
    Close();
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      CorePoller& p = stack_->poller(static_cast<int>(i));
      p.Remove(targets_[i]->fd);
      ::close(targets_[i]->fd);
      p.Retire(targets_[i]);
    }
  }

  // Builds the listener: one socket per core; on error what was built is released.
  Status<void> Open(const ListenOptions& options) {
    const int n = stack_->num_cores();
    for (int i = 0; i < n; ++i) {
      Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (fd.get() < 0) return std::unexpected(Error::FromErrno("Listen: socket"));
      const int one = 1;
      if (setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
          setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
        return std::unexpected(Error::FromErrno("Listen: setting SO_REUSEADDR/SO_REUSEPORT"));
      }
      sockaddr_in sa = ToSockaddr(local_);
      if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
        return std::unexpected(OsError(fmt::format("Listen {}", local_.ToString()), errno));
      }
      if (i == 0) {
        local_ = LocalEndpointOf(fd.get());
        if (auto c = stack_->ClaimListenPort(local_); !c) return std::unexpected(c.error());
        claimed_ = true;
      }
      if (::listen(fd.get(), options.backlog) != 0) {
        return std::unexpected(OsError(fmt::format("Listen {}", local_.ToString()), errno));
      }
      auto* target = new ListenTarget(fd.get(), state_);
      if (auto s = stack_->poller(i).Add(fd.get(), EPOLLIN, target); !s) {
        delete target;
        return std::unexpected(s.error());
      }
      targets_.push_back(target);
      fd.release();
    }
    return {};
  }

  Status<TcpConn> Accept(Deadline deadline) override {
    const std::int64_t deadline_ns =
        deadline == Deadline::max() ? INT64_MAX : sched::DeadlineNs(deadline);
    for (;;) {
      if (state_->closed.load(std::memory_order_acquire)) {
        return std::unexpected(ClosedError(fmt::format("Accept on {}", local_.ToString())));
      }
      const std::uint64_t seen = state_->epoch.load(std::memory_order_seq_cst);
      const int n = static_cast<int>(targets_.size());
      const int first = sched::CurrentCore() < 0 ? 0 : sched::CurrentCore() % n;
      for (int i = 0; i < n; ++i) {
        const int lfd = targets_[(first + i) % n]->fd;
        sockaddr_in peer{};
        socklen_t peer_len = sizeof(peer);
        int cfd;
        do {
          cfd = ::accept4(lfd, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                          SOCK_NONBLOCK | SOCK_CLOEXEC);
        } while (cfd < 0 && (errno == EINTR || errno == ECONNABORTED));
        if (cfd >= 0) {
          auto conn = Adopt(*stack_, cfd, FromSockaddr(peer));
          if (!conn) return std::unexpected(conn.error());
          return TcpConn(std::move(*conn), stack_->counters_for_sockets());
        }
        const int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK) continue;
        if (state_->closed.load(std::memory_order_acquire)) break;  // EINVAL after shutdown
        return std::unexpected(OsError(fmt::format("Accept on {}", local_.ToString()), e));
      }
      state_->lock.lock();
      if (state_->epoch.load(std::memory_order_seq_cst) != seen ||
          state_->closed.load(std::memory_order_acquire)) {
        state_->lock.unlock();
        continue;
      }
      if (!state_->waiters.Wait(deadline_ns)) {
        return std::unexpected(TimedOutError(fmt::format("Accept on {}", local_.ToString())));
      }
    }
  }

  Endpoint local_endpoint() const override { return local_; }

  void Close() override {
    if (state_->closed.exchange(true, std::memory_order_acq_rel)) return;
    // Stop listening now (new SYNs are refused) but keep the fds until the destructor: a
    // parked or running Accept may still be using them.
    for (ListenTarget* t : targets_) ::shutdown(t->fd, SHUT_RDWR);
    if (claimed_) stack_->ReleaseListenPort(local_);
    state_->WakeAll();
  }

 private:
  KernelStack* stack_;
  Endpoint local_;
  std::shared_ptr<AcceptState> state_;
  std::vector<ListenTarget*> targets_;  // [core]; deleted through the pollers
  bool claimed_ = false;
};

}  // namespace

Status<TcpConn> Connect(KernelStack& stack, Endpoint remote, Deadline deadline) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::unexpected(Error::FromErrno("Connect: socket"));
  const std::string what = fmt::format("Connect {}", remote.ToString());
  const sockaddr_in sa = ToSockaddr(remote);
  bool in_progress = false;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0) {
    if (errno != EINPROGRESS) {
      const int e = errno;
      ::close(fd);
      return std::unexpected(OsError(what, e));
    }
    in_progress = true;
  }
  auto conn = Adopt(stack, fd, remote);
  if (!conn) return std::unexpected(conn.error());
  if (in_progress) {
    // Registered after connect(): the first edge is the handshake's outcome.
    for (;;) {
      const std::uint64_t seen = (*conn)->WriteWaiter().epoch();
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 0) > 0 && p.revents != 0) break;
      switch ((*conn)->WriteWaiter().Wait(seen, deadline)) {
        case IoWaiter::kReady:
          continue;
        case IoWaiter::kTimedOut:
          return std::unexpected(TimedOutError(what));
        case IoWaiter::kBusy:
          return std::unexpected(Error(ErrorCode::kInternal, what + ": waiter busy"));
      }
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return std::unexpected(OsError(what, err));
  }
  return TcpConn(std::move(*conn), stack.counters_for_sockets());
}

Status<TcpListener> Listen(KernelStack& stack, Endpoint local, const ListenOptions& options) {
  auto l = std::make_unique<KernelListener>(&stack, local, std::make_shared<AcceptState>());
  if (auto s = l->Open(options); !s) return std::unexpected(s.error());
  return TcpListener(std::move(l), stack.counters_for_sockets());
}

}  // namespace junction::net::kernel
