// sha256.h — SHA-256 (FIPS 180-4, section 6.2), streaming, no dependencies.
//
//   Sha256 h;
//   h.Update(part1);
//   h.Update(part2);
//   std::string hex = ToHex(h.Final());   // or Sha256Hex(whole)
//
// A Sha256 is a plain value: no allocation, not thread-safe (one per computation). Final()
// pads and returns the digest; call Reset() before reusing the object.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace faasnode::functions {

class Sha256 {
 public:
  static constexpr std::size_t kDigestBytes = 32;
  static constexpr std::size_t kBlockBytes = 64;
  using Digest = std::array<std::uint8_t, kDigestBytes>;

  Sha256() { Reset(); }
  void Reset();
  void Update(const void* data, std::size_t size);
  void Update(std::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // Pads the message (section 5.1.1) and returns H(N) (section 6.2.2, step 4) big-endian.
  Digest Final();

 private:
  void Compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, kBlockBytes> buffer_;
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lowercase hex of a digest (64 characters).
std::string ToHex(const Sha256::Digest& digest);
// One-shot: the lowercase hex digest of `bytes`.
std::string Sha256Hex(std::string_view bytes);

}  // namespace faasnode::functions
