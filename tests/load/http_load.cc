// http_load.cc — a closed-loop HTTP/1.1 load generator for benchmarks: C keep-alive
// connections, each sending one request and reading its whole response before the next, for a
// fixed time; prints requests per second. Loopback only: it refuses any other address.
//
//   faasnode_http_load --url http://127.0.0.1:8080/function/echo --body hello
//                      --connections 4 --seconds 5
//   -> requests=123456 errors=0 seconds=5.000 rps=24691.2
//
// Bounded by count and time (--seconds, --max-requests). Exit code 2 for bad flags, 1 when a
// connection fails or a response is not 200 (it says which).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Flags {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string path = "/function/echo";
  std::string body = "hello";
  int connections = 4;
  double seconds = 5;
  long long max_requests = 50'000'000;
};

int Usage(const char* why) {
  std::fprintf(stderr, "faasnode_http_load: %s; usage: --url http://127.0.0.1:PORT/PATH [--body S] "
                       "[--connections N] [--seconds S] [--max-requests N]\n", why);
  return 2;
}

bool ParseUrl(const std::string& url, Flags* f) {
  const std::string prefix = "http://";
  if (url.rfind(prefix, 0) != 0) return false;
  const std::string rest = url.substr(prefix.size());
  const std::size_t slash = rest.find('/');
  const std::string hostport = rest.substr(0, slash);
  f->path = slash == std::string::npos ? "/" : rest.substr(slash);
  const std::size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) return false;
  f->host = hostport.substr(0, colon);
  f->port = std::atoi(hostport.c_str() + colon + 1);
  return f->port > 0 && f->port < 65536;
}

struct Worker {
  long long ok = 0;
  long long errors = 0;
  std::string error;
};

// One connection's loop. Returns when `stop` is set or on a failure.
void Run(const Flags& f, const std::atomic<bool>& stop, std::atomic<long long>& budget, Worker* w) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(f.port));
  inet_pton(AF_INET, f.host.c_str(), &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    w->error = std::string("connect: ") + std::strerror(errno);
    close(fd);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const std::string req = "POST " + f.path + " HTTP/1.1\r\nHost: " + f.host + "\r\nContent-Length: " +
                          std::to_string(f.body.size()) + "\r\n\r\n" + f.body;
  std::string buf;
  buf.reserve(8192);
  char chunk[8192];
  while (!stop.load(std::memory_order_relaxed) && budget.fetch_sub(1, std::memory_order_relaxed) > 0) {
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
      w->error = std::string("send: ") + std::strerror(errno);
      break;
    }
    // Read the head, then Content-Length bytes of body.
    std::size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) {
        w->error = n == 0 ? "the server closed the connection" : std::string("recv: ") + std::strerror(errno);
        close(fd);
        return;
      }
      buf.append(chunk, static_cast<std::size_t>(n));
    }
    std::size_t length = 0;
    const std::size_t cl = buf.find("Content-Length: ");
    if (cl != std::string::npos && cl < head_end) length = std::strtoull(buf.c_str() + cl + 16, nullptr, 10);
    const bool status_ok = buf.compare(0, 12, "HTTP/1.1 200") == 0;
    while (buf.size() < head_end + 4 + length) {
      const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) {
        w->error = "the server closed the connection mid-body";
        close(fd);
        return;
      }
      buf.append(chunk, static_cast<std::size_t>(n));
    }
    if (status_ok) {
      ++w->ok;
    } else {
      ++w->errors;
      if (w->error.empty()) w->error = "a response was not 200: " + buf.substr(0, buf.find("\r\n"));
    }
    buf.erase(0, head_end + 4 + length);
  }
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return Usage(("missing value for " + a).c_str());
    const std::string v = argv[++i];
    if (a == "--url") {
      if (!ParseUrl(v, &f)) return Usage("--url: expected http://HOST:PORT/PATH");
    } else if (a == "--body") {
      f.body = v;
    } else if (a == "--connections") {
      f.connections = std::atoi(v.c_str());
    } else if (a == "--seconds") {
      f.seconds = std::atof(v.c_str());
    } else if (a == "--max-requests") {
      f.max_requests = std::atoll(v.c_str());
    } else {
      return Usage(("unknown flag " + a).c_str());
    }
  }
  if (f.host != "127.0.0.1" && f.host != "localhost") return Usage("only loopback (127.0.0.1) is allowed");
  if (f.host == "localhost") f.host = "127.0.0.1";
  if (f.connections < 1 || f.connections > 256) return Usage("--connections: 1 to 256");
  if (!(f.seconds > 0 && f.seconds <= 600)) return Usage("--seconds: above 0, at most 600");
  std::atomic<bool> stop{false};
  std::atomic<long long> budget{f.max_requests};
  std::vector<Worker> workers(static_cast<std::size_t>(f.connections));
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& w : workers) threads.emplace_back([&, wp = &w] { Run(f, stop, budget, wp); });
  std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
  stop.store(true);
  for (auto& t : threads) t.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  long long ok = 0, errors = 0;
  std::string first_error;
  for (const Worker& w : workers) {
    ok += w.ok;
    errors += w.errors;
    if (first_error.empty()) first_error = w.error;
  }
  std::printf("requests=%lld errors=%lld seconds=%.3f rps=%.1f\n", ok, errors, secs, ok / secs);
  if (!first_error.empty()) {
    std::fprintf(stderr, "faasnode_http_load: %s\n", first_error.c_str());
    return 1;
  }
  return 0;
}
