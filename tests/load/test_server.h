// test_server.h — a small HTTP/1.1 server on plain kernel sockets (127.0.0.1, one thread per
// connection) with a known injected delay and a known one-off stall, for faasload's tests.
//
// Every response is written `delay` after its request arrived (absolute-time sleep, timer
// slack 1 ns). With stall_after > 0, the arrival of request number stall_after (1-based,
// counted over all connections) starts a stall: every response due before stall_start +
// stall is held until then. stall_start() says when it began. held_ns() is the truth the
// generator is checked against: for every response, how long the server actually held it
// (arrival to write), which includes the server's own lateness on a busy machine.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace faasload::testing {

struct TestServerOptions {
  std::chrono::nanoseconds delay{0};
  std::uint64_t stall_after = 0;
  std::chrono::nanoseconds stall{0};
  int status = 200;
};

class TestServer {
 public:
  explicit TestServer(TestServerOptions o) : o_(o) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 1024);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~TestServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    {
      std::lock_guard l(mu_);
      for (int c : conns_) shutdown(c, SHUT_RDWR);
    }
    for (auto& t : threads_) t.join();
    close(fd_);
    for (int c : conns_) close(c);
  }
  int port() const { return port_; }
  std::uint64_t requests() const { return requests_.load(); }
  std::int64_t stall_start_ns() const { return stall_start_ns_.load(); }
  std::vector<std::int64_t> held_ns() const {
    std::lock_guard l(mu_);
    return held_ns_;
  }

 private:
  static std::int64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
  }
  static void SleepUntilNs(std::int64_t t) {
    timespec ts{.tv_sec = t / 1'000'000'000LL, .tv_nsec = t % 1'000'000'000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
  }
  void AcceptLoop() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      int one = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::lock_guard l(mu_);
      conns_.push_back(c);
      threads_.emplace_back([this, c] { Serve(c); });
    }
  }
  void Serve(int c) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    std::string in;
    char buf[16384];
    const std::string body = "ok";
    const std::string response = "HTTP/1.1 " + std::to_string(o_.status) +
                                 " X\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\n" + body;
    for (;;) {
      std::size_t head_end;
      while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) return;
        in.append(buf, static_cast<std::size_t>(n));
      }
      const std::int64_t arrived = NowNs();
      std::size_t content_length = 0;
      const std::string head = in.substr(0, head_end);
      if (auto p = head.find("Content-Length: "); p != std::string::npos) {
        content_length = std::stoul(head.substr(p + 16));
      }
      while (in.size() < head_end + 4 + content_length) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) return;
        in.append(buf, static_cast<std::size_t>(n));
      }
      in.erase(0, head_end + 4 + content_length);
      const std::uint64_t k = ++requests_;
      if (o_.stall_after != 0 && k == o_.stall_after) stall_start_ns_ = arrived;
      std::int64_t due = arrived + o_.delay.count();
      const std::int64_t s = stall_start_ns_.load();
      if (s != 0 && due >= s && due < s + o_.stall.count()) due = s + o_.stall.count();
      if (due > NowNs()) SleepUntilNs(due);
      const std::int64_t written = NowNs();
      if (write(c, response.data(), response.size()) != static_cast<ssize_t>(response.size())) return;
      std::lock_guard l(mu_);
      held_ns_.push_back(written - arrived);
    }
  }

  TestServerOptions o_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::int64_t> stall_start_ns_{0};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<int> conns_;
  std::vector<std::int64_t> held_ns_;
  std::vector<std::thread> threads_;
};

}  // namespace faasload::testing
