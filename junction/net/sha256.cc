// sha256.cc — SHA-256 block functions (portable, and x86 SHA-NI) and the streaming front end.
#include "junction/net/sha256.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

namespace junction::net {
namespace {

alignas(16) constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline std::uint32_t Rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

void BlocksPortable(std::uint32_t* state, const std::uint8_t* p, std::size_t n) {
  for (; n > 0; --n, p += 64) {
    std::uint32_t w[64];
    for (int t = 0; t < 16; ++t) {
      w[t] = (std::uint32_t{p[4 * t]} << 24) | (std::uint32_t{p[4 * t + 1]} << 16) |
             (std::uint32_t{p[4 * t + 2]} << 8) | p[4 * t + 3];
    }
    for (int t = 16; t < 64; ++t) {
      const std::uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      const std::uint32_t s1 = Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25);
      const std::uint32_t ch = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + s1 + ch + kK[t] + w[t];
      const std::uint32_t s0 = Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22);
      const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const std::uint32_t t2 = s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

// The SHA-NI form: the state as ABEF/CDGH vectors, four rounds per 128-bit message group;
// groups 4..15 come from the previous four via sha256msg1/msg2 (FIPS 180-4 section 6.2.2).
__attribute__((target("sha,sse4.1,ssse3"))) void BlocksShaNi(std::uint32_t* state,
                                                             const std::uint8_t* p, std::size_t n) {
  const __m128i kMask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));
  __m128i state1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                // CDAB
  state1 = _mm_shuffle_epi32(state1, 0x1B);          // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);  // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);       // CDGH

  for (; n > 0; --n, p += 64) {
    const __m128i abef_save = state0;
    const __m128i cdgh_save = state1;
    __m128i g[4];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      __m128i w;
      if (i < 4) {
        w = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), kMask);
      } else {
        const __m128i m4 = g[i % 4], m3 = g[(i + 1) % 4], m2 = g[(i + 2) % 4], m1 = g[(i + 3) % 4];
        w = _mm_sha256msg1_epu32(m4, m3);
        w = _mm_add_epi32(w, _mm_alignr_epi8(m1, m2, 4));
        w = _mm_sha256msg2_epu32(w, m1);
      }
      g[i % 4] = w;
      __m128i msg = _mm_add_epi32(w, _mm_load_si128(reinterpret_cast<const __m128i*>(&kK[4 * i])));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
    }
    state0 = _mm_add_epi32(state0, abef_save);
    state1 = _mm_add_epi32(state1, cdgh_save);
  }

  tmp = _mm_shuffle_epi32(state0, 0x1B);        // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);     // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);  // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);     // HGFE
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), state1);
}

bool CpuHasShaNi() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool ssse3 = (c & (1u << 9)) != 0;
  const bool sse41 = (c & (1u << 19)) != 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool sha = (b & (1u << 29)) != 0;
  return ssse3 && sse41 && sha;
}

}  // namespace

bool Sha256::HardwareAccelerated() {
  static const bool has = CpuHasShaNi();
  return has;
}

Sha256::Sha256(Impl impl)
    : blocks_(impl == Impl::kAuto && HardwareAccelerated() ? &BlocksShaNi : &BlocksPortable) {
  Reset();
}

void Sha256::Reset() {
  static constexpr std::uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::memcpy(state_, kInit, sizeof(state_));
  buf_len_ = 0;
  total_ = 0;
}

void Sha256::Update(std::span<const std::byte> data) {
  auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t n = data.size();
  total_ += n;
  if (buf_len_ > 0) {
    const std::size_t take = std::min(n, sizeof(buf_) - buf_len_);
    std::memcpy(buf_ + buf_len_, p, take);
    buf_len_ += take;
    p += take;
    n -= take;
    if (buf_len_ < sizeof(buf_)) return;
    blocks_(state_, buf_, 1);
    buf_len_ = 0;
  }
  if (n >= 64) {
    blocks_(state_, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
  }
  std::memcpy(buf_, p, n);
  buf_len_ = n;
}

Sha256::Digest Sha256::Finish() {
  const std::uint64_t bits = total_ * 8;
  std::uint8_t pad[72] = {0x80};
  const std::size_t pad_len = (buf_len_ < 56 ? 56 - buf_len_ : 120 - buf_len_);
  for (int i = 0; i < 8; ++i) pad[pad_len + i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  Update(std::as_bytes(std::span(pad, pad_len + 8)));
  Digest d;
  for (int i = 0; i < 8; ++i) {
    d[4 * i] = static_cast<std::uint8_t>(state_[i] >> 24);
    d[4 * i + 1] = static_cast<std::uint8_t>(state_[i] >> 16);
    d[4 * i + 2] = static_cast<std::uint8_t>(state_[i] >> 8);
    d[4 * i + 3] = static_cast<std::uint8_t>(state_[i]);
  }
  Reset();
  return d;
}

Sha256::Digest Sha256::Of(std::span<const std::byte> data) {
  Sha256 h;
  h.Update(data);
  return h.Finish();
}

std::string Sha256::Hex(const Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(64, '0');
  for (int i = 0; i < 32; ++i) {
    s[2 * i] = kHex[d[i] >> 4];
    s[2 * i + 1] = kHex[d[i] & 15];
  }
  return s;
}

}  // namespace junction::net
