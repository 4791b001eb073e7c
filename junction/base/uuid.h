// uuid.h — an 8-4-4-4-12 lowercase UUID between its 36 characters and its 16 bytes, by table
// lookups (two digits per load out, no branch per digit in).
//
// Why: the invoke path writes one per call without X-Call-Id, and the energy ledger's packs
// keep the node's call ids as 16 bytes (a branchy parse was a third of the ledger writer's
// time per packed record).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace junction {

inline constexpr std::size_t kUuidTextSize = 36;

namespace uuid_detail {
// Where the 16 digit pairs start in the text.
inline constexpr std::array<std::uint8_t, 16> kPairs = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
inline constexpr std::array<char, 512> kHex2 = [] {
  std::array<char, 512> t{};
  constexpr char kDigits[] = "0123456789abcdef";
  for (int b = 0; b < 256; ++b) {
    t[2 * b] = kDigits[b >> 4];
    t[2 * b + 1] = kDigits[b & 0xf];
  }
  return t;
}();
// Digit values; 0xff for anything but 0-9 and a-f (an uppercase digit would not come back as
// it went in).
inline constexpr std::array<std::uint8_t, 256> kValue = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xff);
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  return t;
}();
}  // namespace uuid_detail

// Writes the 36 characters of `bytes` to `out`. No allocation.
inline void FormatUuid(const std::uint8_t (&bytes)[16], char* out) {
  for (std::size_t k = 0; k < 16; ++k) {
    std::memcpy(out + uuid_detail::kPairs[k], &uuid_detail::kHex2[2 * bytes[k]], 2);
  }
  out[8] = out[13] = out[18] = out[23] = '-';
}

// The 16 bytes of a lowercase 8-4-4-4-12 UUID; false for any other text (bytes then unspecified).
inline bool ParseUuid(std::string_view text, std::uint8_t (&bytes)[16]) {
  if (text.size() != kUuidTextSize || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') {
    return false;
  }
  const auto* u = reinterpret_cast<const unsigned char*>(text.data());
  std::uint8_t bad = 0;
  for (std::size_t k = 0; k < 16; ++k) {
    const std::uint8_t hi = uuid_detail::kValue[u[uuid_detail::kPairs[k]]];
    const std::uint8_t lo = uuid_detail::kValue[u[uuid_detail::kPairs[k] + 1]];
    bad |= static_cast<std::uint8_t>(hi | lo);
    bytes[k] = static_cast<std::uint8_t>(hi << 4 | (lo & 0x0f));
  }
  return (bad & 0xf0) == 0;
}

}  // namespace junction
