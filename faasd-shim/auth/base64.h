// base64.h — RFC 4648 base64 (standard alphabet, padded), as Go's encoding/json writes []byte
// and as HTTP basic auth carries "user:password".
#pragma once

#include <string>
#include <string_view>

#include "junction/base/error.h"

namespace faasnode::auth {

std::string Base64Encode(std::string_view bytes);
// Errors: kInvalidArgument for a character outside the alphabet, bad padding or a length that
// is not a multiple of 4.
[[nodiscard]] junction::Status<std::string> Base64Decode(std::string_view text);

}  // namespace faasnode::auth
