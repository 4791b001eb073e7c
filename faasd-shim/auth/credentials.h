// credentials.h — the node's basic-auth credentials, as faasd keeps them: two files in the
// state dir, generated on first start.
//
//   STATE/basic-auth-user      "admin"
//   STATE/basic-auth-password  63 random characters [a-zA-Z0-9]
//
// Both are written only when absent (O_EXCL, mode 0600) and read back trimmed of surrounding
// white space, so an operator may replace either file. Log in with:
//   cat STATE/basic-auth-password | faas-cli login --username admin --password-stdin
#pragma once

#include <string>
#include <string_view>

#include "junction/base/error.h"

namespace faasnode::auth {

struct Credentials {
  std::string user;
  std::string password;
};

inline constexpr std::string_view kUserFile = "basic-auth-user";
inline constexpr std::string_view kPasswordFile = "basic-auth-password";

// Reads the files from `dir` (which must exist), creating them first when absent. Errors: kIo
// naming the file; kInvalidArgument when a file is empty once trimmed.
[[nodiscard]] junction::Status<Credentials> LoadOrCreateCredentials(const std::string& dir);

// A password of `length` characters from [a-zA-Z0-9], from getrandom(2).
std::string GeneratePassword(std::size_t length = 63);

// Whether an Authorization header value ("Basic base64(user:pass)") carries `c`. The password
// is compared in constant time (and so is the user name). Never blocks, allocates only for the
// decoded value.
bool CheckBasicAuth(const Credentials& c, std::string_view authorization);

}  // namespace faasnode::auth
