// error.h — junction's one error type: Status<T> = std::expected<T, Error>.
//
// Every fallible junction call returns Status<T>. An Error carries a code (what kind of
// failure, for callers that branch on it), an optional errno, and a message written for a
// person: what was wrong and what to do about it. Errors are cheap to move, never thrown on
// the data path, and [[nodiscard]] through std::expected.
//
//   Status<int> ParsePort(std::string_view s);
//   auto port = ParsePort(arg);
//   if (!port) { spdlog::error("{}", port.error().message()); return 2; }
#pragma once

#include <cerrno>
#include <cstring>
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace junction {

enum class ErrorCode {
  kInvalidArgument,    // the caller passed something malformed or out of range
  kNotFound,           // a named thing does not exist
  kAlreadyExists,      // a named thing exists and may not be replaced
  kTimedOut,           // a deadline passed before the operation finished
  kClosed,             // the object (channel, socket, runtime) was closed
  kWouldBlock,         // a non-blocking operation could not proceed now
  kResourceExhausted,  // a limit or pool ran out
  kPermissionDenied,   // the OS or a policy refused
  kUnavailable,        // a capability is absent on this machine
  kIo,                 // an OS call failed; errno() says which
  kInternal,           // a broken invariant: a bug
};

std::string_view ErrorCodeName(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message, int sys_errno = 0)
      : code_(code), errno_(sys_errno), message_(std::move(message)) {}

  // An error from a failed OS call: the message gets ": <strerror>" appended.
  static Error FromErrno(std::string_view what, int sys_errno = errno) {
    std::string m(what);
    m += ": ";
    m += std::strerror(sys_errno);
    return Error(ErrorCode::kIo, std::move(m), sys_errno);
  }

  ErrorCode code() const { return code_; }
  int sys_errno() const { return errno_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  int errno_;
  std::string message_;
};

template <typename T>
using Status = std::expected<T, Error>;

// Shorthand for returning an error from a function that returns Status<T>.
inline std::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}

inline std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kAlreadyExists: return "already exists";
    case ErrorCode::kTimedOut: return "timed out";
    case ErrorCode::kClosed: return "closed";
    case ErrorCode::kWouldBlock: return "would block";
    case ErrorCode::kResourceExhausted: return "resource exhausted";
    case ErrorCode::kPermissionDenied: return "permission denied";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kInternal: return "internal error";
  }
  return "unknown";
}

}  // namespace junction
