// net_error.h — how junction/net reports network failures in the one junction::Error type.
//
// Every backend (kernel, loopback, later dpdk) maps its failures onto the same code and errno,
// so callers branch the same way whatever the stack:
//
//   failure                              ErrorCode          sys_errno      test with
//   connection refused (no listener)     kIo                ECONNREFUSED   IsConnectionRefused
//   connection reset / peer gone         kIo                ECONNRESET     IsConnectionReset
//                                                           (or EPIPE)
//   a deadline passed                    kTimedOut          ETIMEDOUT      IsTimedOut
//   this handle was closed / shut down   kClosed            0 / EPIPE      IsClosed
//   address already in use               kAlreadyExists     EADDRINUSE     IsAddressInUse
//   malformed argument                   kInvalidArgument   (any)
//   other OS failure                     kIo                errno
//
// The helpers below build these errors with a message that names the operation and the
// endpoints involved and says what to do. They allocate (a message string): error paths only.
#pragma once

#include <string>
#include <string_view>

#include "junction/base/error.h"

namespace junction::net {

Error RefusedError(std::string_view what);
Error ResetError(std::string_view what, int sys_errno);  // ECONNRESET or EPIPE
Error TimedOutError(std::string_view what);
Error ClosedError(std::string_view what);
Error AddressInUseError(std::string_view what);
// An OS failure: kIo with errno, except that ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT and
// EADDRINUSE become the errors above.
Error OsError(std::string_view what, int sys_errno);

bool IsConnectionRefused(const Error& e);
bool IsConnectionReset(const Error& e);  // ECONNRESET or EPIPE: the peer is gone
bool IsTimedOut(const Error& e);
bool IsClosed(const Error& e);
bool IsAddressInUse(const Error& e);

}  // namespace junction::net
