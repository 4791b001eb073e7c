// cpu_kernel_avx2.cc — AVX2/FMA dot-product tiles (compiled with -mavx2 -mfma; see the header).
//
// Only intrinsics and functions with internal linkage here: nothing this file emits may be
// shared with translation units compiled for the baseline ISA.
#include <immintrin.h>

#include "functions/swiglu-mlp/cpu_kernel_internal.h"

namespace swiglu::internal {
namespace {

// 8 bf16 -> 8 fp32 (exact: shift the bits into the top half).
inline __m256 LoadBf16x8(const uint16_t* p) {
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

inline float Bf16BitsToFloat(uint16_t b) {
  return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(b) << 16)));
}

// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7))
inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// R rows of a against C weight rows (b[0..C-1]); acc in registers, k in steps of 8, then the
// k % 8 tail in scalar FMA after the horizontal sums.
template <int R, int C>
inline void MicroTile(const float* a, int k, const uint16_t* const* b, float* out, int ld) {
  __m256 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  int i = 0;
  for (; i + 8 <= k; i += 8) {
    __m256 w[C];
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) w[c] = LoadBf16x8(b[c] + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      __m256 x = _mm256_loadu_ps(a + static_cast<long>(r) * k + i);
#pragma GCC unroll 2
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(x, w[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      float s = HorizontalSum(acc[r][c]);
      for (int t = i; t < k; ++t) {
        __m128 p = _mm_fmadd_ss(_mm_set_ss(a[static_cast<long>(r) * k + t]),
                                _mm_set_ss(Bf16BitsToFloat(b[c][t])), _mm_set_ss(s));
        s = _mm_cvtss_f32(p);
      }
      out[r * ld + c] = s;
    }
  }
}

template <int C>
inline void MicroTileRows(int rows, const float* a, int k, const uint16_t* const* b, float* out,
                          int ld) {
  switch (rows) {
    case 4:
      MicroTile<4, C>(a, k, b, out, ld);
      break;
    case 3:
      MicroTile<3, C>(a, k, b, out, ld);
      break;
    case 2:
      MicroTile<2, C>(a, k, b, out, ld);
      break;
    default:
      MicroTile<1, C>(a, k, b, out, ld);
      break;
  }
}

}  // namespace

void DotTileAvx2(const DotTile& t) {
  const long k = t.k;
  for (int j = t.j0; j < t.j1;) {
    if (t.b2 != nullptr) {
      // Fused: gate row j and up row j against the same rows of a. The two results are written
      // to out/out2 through a 2-wide scratch row so MicroTile keeps one output layout.
      const uint16_t* rows[2] = {t.b + j * k, t.b2 + j * k};
      for (int m = t.m0; m < t.m1; m += 4) {
        int r = t.m1 - m < 4 ? t.m1 - m : 4;
        float pair[4 * 2];
        MicroTileRows<2>(r, t.a + m * k, t.k, rows, pair, 2);
        for (int i = 0; i < r; ++i) {
          t.out[(m - t.m0 + i) * t.ld + (j - t.j0)] = pair[i * 2];
          t.out2[(m - t.m0 + i) * t.ld + (j - t.j0)] = pair[i * 2 + 1];
        }
      }
      ++j;
    } else {
      // Plain GEMM: two adjacent weight rows per micro-tile.
      int c = t.j1 - j >= 2 ? 2 : 1;
      const uint16_t* rows[2] = {t.b + j * k, t.b + (j + c - 1) * k};
      for (int m = t.m0; m < t.m1; m += 4) {
        int r = t.m1 - m < 4 ? t.m1 - m : 4;
        float* o = t.out + (m - t.m0) * t.ld + (j - t.j0);
        if (c == 2) {
          MicroTileRows<2>(r, t.a + m * k, t.k, rows, o, t.ld);
        } else {
          MicroTileRows<1>(r, t.a + m * k, t.k, rows, o, t.ld);
        }
      }
      j += c;
    }
  }
}

}  // namespace swiglu::internal
