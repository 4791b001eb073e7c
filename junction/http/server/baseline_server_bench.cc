// baseline_server_bench.cc — the yardstick for docs/benchmarks/node.md: a minimal single-thread
// epoll HTTP/1.1 server that answers every request with one fixed response.
//
//   taskset -c 0 build/bin/http_baseline_server --port 8091 &
//   taskset -c 1 wrk -t1 -c32 -d10s -s scripts/wrk-post-hello.lua http://127.0.0.1:8091/
//
// What it does per request and no more: finds the end of the head ("\r\n\r\n"), skips a
// Content-Length body, appends the fixed response, writes when the read batch is done.
// Keep-alive only, no chunked bodies, no timeouts: the least any HTTP server must do, so the
// node's own overhead is the difference. Not a server to expose: loopback, benchmarks only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kResponse =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";

struct Conn {
  int fd;
  std::string in;
  std::size_t skip_body = 0;  // body bytes still to discard
  std::string out;
};

// Content-Length of a request head, 0 when absent.
std::size_t ContentLength(std::string_view head) {
  std::size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string_view::npos) {
    pos += 2;
    constexpr std::string_view kName = "content-length:";
    if (head.size() - pos >= kName.size() && strncasecmp(head.data() + pos, kName.data(), kName.size()) == 0) {
      return std::strtoull(head.data() + pos + kName.size(), nullptr, 10);
    }
  }
  return 0;
}

// Consumes complete requests from c.in; appends one response each.
void Parse(Conn& c) {
  std::size_t at = 0;
  for (;;) {
    if (c.skip_body > 0) {
      const std::size_t n = std::min(c.skip_body, c.in.size() - at);
      at += n;
      c.skip_body -= n;
      if (c.skip_body > 0) break;
    }
    const std::size_t end = c.in.find("\r\n\r\n", at);
    if (end == std::string::npos) break;
    c.skip_body = ContentLength(std::string_view(c.in).substr(at, end + 4 - at));
    at = end + 4;
    c.out.append(kResponse);
  }
  c.in.erase(0, at);
}

bool Flush(Conn& c) {
  while (!c.out.empty()) {
    const ssize_t n = write(c.fd, c.out.data(), c.out.size());
    if (n > 0) {
      c.out.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EAGAIN) {
      return true;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 8091;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--port" && i + 1 < argc) {
      port = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--port N]   (answers every request on 127.0.0.1:N with 200 \"hello\")\n", argv[0]);
      return 2;
    }
  }
  const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(lfd, 1024) != 0) {
    std::fprintf(stderr, "http_baseline_server: cannot listen on 127.0.0.1:%d: %s; pick another --port\n", port,
                 std::strerror(errno));
    return 1;
  }
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event lev{};
  lev.events = EPOLLIN;
  lev.data.ptr = nullptr;
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
  std::fprintf(stderr, "http_baseline_server: listening on 127.0.0.1:%d\n", port);
  std::vector<epoll_event> events(256);
  std::vector<char> buf(64 * 1024);
  for (;;) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), -1);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.ptr == nullptr) {
        for (;;) {
          const int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (fd < 0) break;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          auto* c = new Conn{fd, {}, 0, {}};
          epoll_event ev{};
          ev.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP;
          ev.data.ptr = c;
          epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        }
        continue;
      }
      auto* c = static_cast<Conn*>(events[i].data.ptr);
      bool alive = true;
      for (;;) {
        const ssize_t r = read(c->fd, buf.data(), buf.size());
        if (r > 0) {
          c->in.append(buf.data(), static_cast<std::size_t>(r));
          continue;
        }
        if (r == 0 || errno != EAGAIN) alive = false;
        break;
      }
      Parse(*c);
      if (!Flush(*c)) alive = false;
      if (!alive) {
        close(c->fd);
        delete c;
      }
    }
  }
}
