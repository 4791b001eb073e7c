// e2e_util.h — what every end-to-end test of the real `faasnode` binary needs: run a shell
// command and capture its output, pick a free loopback port, check for curl.
//
// Test-only helpers: blocking (popen, sockets), for a test's main thread.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace faasnode::e2e {

struct CommandResult {
  int exit_code = -1;  // -1: it could not start, or a signal ended it
  std::string output;  // stdout and stderr together
};

// Runs `cmd` through /bin/sh, stderr folded into the output.
inline CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A loopback TCP port that was free a moment ago (the kernel's pick for port 0).
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

inline bool HaveCurl() { return RunCommand("command -v curl").exit_code == 0; }

}  // namespace faasnode::e2e
