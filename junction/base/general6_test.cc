// general6_test.cc — General6 against std::to_chars(general, 6).
#include "junction/base/general6.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdlib>
#include <random>
#include <string>

namespace junction {
namespace {

std::string Reference(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 6);
  return std::string(buf, r.ptr);
}

std::string Ours(double v) {
  char buf[32];
  return std::string(General6(buf, v));
}

TEST(General6, MatchesToCharsOnChosenValues) {
  const double values[] = {0.0,     -0.0,      1.0,        -1.0,       0.5,       10.0,
                           100000,  999999,    999999.4,   999999.5,   1e6,       1234567,
                           0.0001,  0.00012345, 0.000099999, 9.99999e-5, 1e-5,     3.6e6,
                           1e-12,   2.5e-9,    123.456789, 0.1,        0.30000001, 42,
                           1e100,   1.5e-100,  5e-324,     1e308,      6.02214076e23};
  for (double v : values) EXPECT_EQ(Ours(v), Reference(v)) << v;
  EXPECT_EQ(Ours(std::numeric_limits<double>::infinity()), Reference(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(Ours(std::nan("")), Reference(std::nan("")));
}

// Random magnitudes from 1e-20 to 1e20: the text equals to_chars's, or (near a rounding
// half-way point, see general6.h) differs by one in the sixth significant digit.
TEST(General6, AgreesWithToCharsOnRandomValues) {
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> exp10(-20, 20);
  int exact = 0;
  constexpr int kN = 200'000;
  for (int i = 0; i < kN; ++i) {
    const double v = std::pow(10.0, exp10(rng)) * (i % 7 == 0 ? -1 : 1);
    const std::string ours = Ours(v), ref = Reference(v);
    if (ours == ref) {
      ++exact;
      continue;
    }
    const double a = std::strtod(ours.c_str(), nullptr), b = std::strtod(ref.c_str(), nullptr);
    EXPECT_LE(std::fabs(a - b), std::fabs(b) * 1.01e-5) << v << ": " << ours << " vs " << ref;
  }
  EXPECT_GE(exact, kN * 999 / 1000) << "more than 0.1% differ";
}

}  // namespace
}  // namespace junction
