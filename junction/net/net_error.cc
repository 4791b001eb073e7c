// net_error.cc — builders and predicates for junction/net's errors (see net_error.h).
#include "junction/net/net_error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace junction::net {

Error RefusedError(std::string_view what) {
  return Error(ErrorCode::kIo,
               fmt::format("{}: connection refused (nothing listens there; start the server "
                           "or check the address and port)",
                           what),
               ECONNREFUSED);
}

Error ResetError(std::string_view what, int sys_errno) {
  return Error(ErrorCode::kIo,
               fmt::format("{}: {} (the peer closed or aborted the connection; close this "
                           "one too)",
                           what, sys_errno == EPIPE ? "broken pipe" : "connection reset by peer"),
               sys_errno == EPIPE ? EPIPE : ECONNRESET);
}

Error TimedOutError(std::string_view what) {
  return Error(ErrorCode::kTimedOut,
               fmt::format("{}: the deadline passed first (give it a later deadline or check "
                           "that the peer is responsive)",
                           what),
               ETIMEDOUT);
}

Error ClosedError(std::string_view what) {
  return Error(ErrorCode::kClosed,
               fmt::format("{}: the socket is closed or shut down for this direction", what));
}

Error AddressInUseError(std::string_view what) {
  return Error(ErrorCode::kAlreadyExists,
               fmt::format("{}: address already in use (another listener holds it; pick "
                           "another port or use port 0 to get a free one)",
                           what),
               EADDRINUSE);
}

Error OsError(std::string_view what, int sys_errno) {
  switch (sys_errno) {
    case ECONNREFUSED:
      return RefusedError(what);
    case ECONNRESET:
    case EPIPE:
      return ResetError(what, sys_errno);
    case ETIMEDOUT:
      return TimedOutError(what);
    case EADDRINUSE:
      return AddressInUseError(what);
    default:
      return Error::FromErrno(what, sys_errno);
  }
}

bool IsConnectionRefused(const Error& e) {
  return e.sys_errno() == ECONNREFUSED;
}
bool IsConnectionReset(const Error& e) {
  return e.code() == ErrorCode::kIo && (e.sys_errno() == ECONNRESET || e.sys_errno() == EPIPE);
}
bool IsTimedOut(const Error& e) {
  return e.code() == ErrorCode::kTimedOut;
}
bool IsClosed(const Error& e) {
  return e.code() == ErrorCode::kClosed;
}
bool IsAddressInUse(const Error& e) {
  return e.sys_errno() == EADDRINUSE;
}

}  // namespace junction::net
