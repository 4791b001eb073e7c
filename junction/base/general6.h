// general6.h — a double as std::to_chars(..., std::chars_format::general, 6) writes it
// ("%g": six significant digits, trailing zeros dropped, e-notation below 1e-4 and from 1e6),
// in about a third of its instructions.
//
// Why: the invoke path writes two such figures per call (X-Energy-Joules, X-Carbon-Grams), and
// libstdc++'s floating-point to_chars cost ~620 instructions each there. The digits come from
// one multiplication by a power of ten rather than from exact decimal conversion, so the sixth
// digit can differ by one from to_chars on values within about 1e-15 (relative) of a rounding
// half-way point; the text is an estimate's display, and the tests bound that difference.
// Zero, values that are not finite, and magnitudes outside about [1e-17, 1e27] go to
// std::to_chars itself.
#pragma once

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace junction {

// Writes into `buf` (32 bytes are enough) and returns the text. Thread-safe, no allocation.
inline std::string_view General6(char (&buf)[32], double v) {
  // Powers of ten that a double holds exactly: scaling by one of them is a single rounding.
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  auto fallback = [&] {
    const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 6);
    return std::string_view(buf, static_cast<std::size_t>(r.ptr - buf));
  };
  const double a = std::fabs(v);
  // Subnormals too: their exponent field does not give the magnitude.
  if (!std::isfinite(v) || a < 1e-300) return fallback();
  // Decimal exponent x (a = d.ddddd x 10^x). With a in [2^e2, 2^(e2+1)), floor(e2 log10 2)
  // is the exponent or one below it; (e2 x 78913) >> 18 is that floor for |e2| < 1600.
  const int e2 = static_cast<int>((std::bit_cast<std::uint64_t>(a) >> 52) & 0x7ff) - 1023;
  int x = (e2 * 78913) >> 18;
  // a x 10^(5-x), rounded to an integer of six digits.
  auto scaled = [&](int xx) {
    const int e = 5 - xx;
    return e >= 0 ? a * kPow10[e] : a / kPow10[-e];
  };
  // One step up when the estimate was low, or when the value rounds up to 10^(x+1)
  // (999999.5 x 10^(x-5) and above), as %g does. Scaling by an exact power rounds once and
  // monotonically, so sv lands in [99999.5, 999999.5) and m has six digits.
  if (x < -17 || x > 25) return fallback();
  double sv = scaled(x);
  if (sv >= 999999.5) sv = scaled(++x);
  std::uint64_t m = static_cast<std::uint64_t>(sv + 0.5);
  char* p = buf;
  if (v < 0) *p++ = '-';
  char d[6];
  for (int i = 5; i >= 0; --i, m /= 10) d[i] = static_cast<char>('0' + m % 10);
  int n = 6;  // significant digits left after dropping trailing zeros
  while (n > 1 && d[n - 1] == '0') --n;
  if (x >= -4 && x < 6) {
    if (x >= 0) {
      // x + 1 digits before the point (padded with zeros if n is smaller)
      for (int i = 0; i <= x; ++i) *p++ = i < n ? d[i] : '0';
      if (n > x + 1) {
        *p++ = '.';
        for (int i = x + 1; i < n; ++i) *p++ = d[i];
      }
    } else {
      *p++ = '0';
      *p++ = '.';
      for (int i = 0; i < -x - 1; ++i) *p++ = '0';
      for (int i = 0; i < n; ++i) *p++ = d[i];
    }
  } else {
    *p++ = d[0];
    if (n > 1) {
      *p++ = '.';
      for (int i = 1; i < n; ++i) *p++ = d[i];
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    int ax = x < 0 ? -x : x;
    if (ax >= 100) *p++ = static_cast<char>('0' + ax / 100);
    *p++ = static_cast<char>('0' + ax / 10 % 10);
    *p++ = static_cast<char>('0' + ax % 10);
  }
  return std::string_view(buf, static_cast<std::size_t>(p - buf));
}

}  // namespace junction
