// callback_listener.h — a callback receiver on loopback for the e2e tests (async calls POST
// their results to it): plain sockets, one thread, HTTP/1.1 POSTs with a Content-Length body;
// answers 200 and closes. Test-only.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>

namespace faasnode::e2e {

class CallbackListener {
 public:
  CallbackListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(fd_, 64);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~CallbackListener() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  CallbackListener(const CallbackListener&) = delete;
  CallbackListener& operator=(const CallbackListener&) = delete;

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/done"; }
  // call id -> the headers of its (last) callback, lower-cased names.
  std::map<std::string, std::map<std::string, std::string>> Got() {
    std::lock_guard lock(mu_);
    return got_;
  }
  // call id -> the body of its (last) callback.
  std::map<std::string, std::string> Bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  int posts() {
    std::lock_guard lock(mu_);
    return posts_;
  }

 private:
  void Loop() {
    while (!stop_) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string in;
      char buf[4096];
      std::size_t head_end = std::string::npos, need = 0;
      while (true) {
        const ssize_t n = read(c, buf, sizeof(buf));
        if (n <= 0) break;
        in.append(buf, n);
        if (head_end == std::string::npos && (head_end = in.find("\r\n\r\n")) != std::string::npos) {
          std::smatch m;
          const std::string head = in.substr(0, head_end);
          if (std::regex_search(head, m, std::regex("[Cc]ontent-[Ll]ength: *([0-9]+)"))) need = std::stoul(m[1]);
        }
        if (head_end != std::string::npos && in.size() >= head_end + 4 + need) break;
      }
      std::map<std::string, std::string> headers;
      std::size_t pos = in.find("\r\n");
      while (pos != std::string::npos && pos < head_end) {
        const std::size_t next = in.find("\r\n", pos + 2);
        const std::string line = in.substr(pos + 2, next - pos - 2);
        if (const auto colon = line.find(':'); colon != std::string::npos) {
          std::string k = line.substr(0, colon);
          for (char& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          headers[k] = line.substr(line.find_first_not_of(' ', colon + 1));
        }
        pos = next;
      }
      const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
      (void)!write(c, reply.data(), reply.size());
      close(c);
      std::lock_guard lock(mu_);
      ++posts_;
      const std::string id = headers["x-call-id"];
      got_[id] = headers;
      bodies_[id] = head_end == std::string::npos ? std::string() : in.substr(head_end + 4, need);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, std::string>> got_;
  std::map<std::string, std::string> bodies_;
  int posts_ = 0;
};

}  // namespace faasnode::e2e
