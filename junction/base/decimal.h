// decimal.h — an unsigned integer in decimal, two digits per step from a table.
//
// Why: the invoke path writes a 19-digit start time (X-Start-Time) on every call, and
// libstdc++ 12's std::to_chars spends ~280 instructions there (a pass for the length, then
// the digits); writing from the end needs no length pass and costs about a third of that.
// Same text as std::to_chars(first, last, v).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace junction {

// Writes `v` at the end of `buf` and returns the text (a view into `buf`). Thread-safe, no
// allocation.
inline std::string_view Decimal(char (&buf)[20], std::uint64_t v) {
  static constexpr std::array<char, 200> kPairs = [] {
    std::array<char, 200> t{};
    for (int i = 0; i < 100; ++i) {
      t[2 * i] = static_cast<char>('0' + i / 10);
      t[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
    return t;
  }();
  char* const end = buf + sizeof(buf);  // 20 digits hold any uint64_t
  char* p = end;
  while (v >= 100) {
    p -= 2;
    std::memcpy(p, &kPairs[2 * (v % 100)], 2);
    v /= 100;
  }
  if (v >= 10) {
    p -= 2;
    std::memcpy(p, &kPairs[2 * v], 2);
  } else {
    *--p = static_cast<char>('0' + v);
  }
  return std::string_view(p, static_cast<std::size_t>(end - p));
}

}  // namespace junction
