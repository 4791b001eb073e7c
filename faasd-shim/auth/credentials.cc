// credentials.cc — credential files and the basic-auth check.
#include "faasd-shim/auth/credentials.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>

#include "faasd-shim/auth/base64.h"

namespace faasnode::auth {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Creates `path` with `content` unless it exists.
Status<void> WriteIfAbsent(const std::string& path, std::string_view content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return {};
    return std::unexpected(junction::Error::FromErrno("cannot create " + path));
  }
  const ssize_t n = write(fd, content.data(), content.size());
  const bool ok = n == static_cast<ssize_t>(content.size()) && fsync(fd) == 0;
  const int saved = errno;
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    return std::unexpected(junction::Error::FromErrno("cannot write " + path, saved));
  }
  return {};
}

Status<std::string> ReadTrimmed(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(junction::Error::FromErrno("cannot read " + path));
  std::string s;
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  std::string t(Trim(s));
  if (t.empty()) return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is empty; write a value or delete it to have one generated", path));
  return t;
}

// Constant time in the length of `b` (the secret); lengths are not hidden.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff |= x ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

}  // namespace

std::string GeneratePassword(std::size_t length) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out;
  while (out.size() < length) {
    unsigned char buf[64];
    ssize_t n = getrandom(buf, sizeof(buf), 0);
    if (n <= 0) continue;
    for (ssize_t i = 0; i < n && out.size() < length; ++i) {
      if (buf[i] < 248) out += kChars[buf[i] % 62];  // 248 = 4 * 62: no modulo bias
    }
  }
  return out;
}

Status<Credentials> LoadOrCreateCredentials(const std::string& dir) {
  const std::string user_path = dir + "/" + std::string(kUserFile);
  const std::string pass_path = dir + "/" + std::string(kPasswordFile);
  if (auto w = WriteIfAbsent(user_path, "admin"); !w) return std::unexpected(w.error());
  if (auto w = WriteIfAbsent(pass_path, GeneratePassword()); !w) return std::unexpected(w.error());
  Credentials c;
  auto u = ReadTrimmed(user_path);
  if (!u) return std::unexpected(u.error());
  auto p = ReadTrimmed(pass_path);
  if (!p) return std::unexpected(p.error());
  c.user = std::move(*u);
  c.password = std::move(*p);
  return c;
}

bool CheckBasicAuth(const Credentials& c, std::string_view authorization) {
  // Go's r.BasicAuth: scheme "Basic" case-insensitively, one space, base64 of user:pass.
  constexpr std::string_view kScheme = "basic ";
  if (authorization.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  }
  auto decoded = Base64Decode(authorization.substr(kScheme.size()));
  if (!decoded) return false;
  const std::size_t colon = decoded->find(':');
  if (colon == std::string::npos) return false;
  const std::string_view user = std::string_view(*decoded).substr(0, colon);
  const std::string_view pass = std::string_view(*decoded).substr(colon + 1);
  const bool user_ok = ConstantTimeEquals(user, c.user);
  const bool pass_ok = ConstantTimeEquals(pass, c.password);
  return user_ok && pass_ok;
}

}  // namespace faasnode::auth
