// sha256.h — SHA-256 (FIPS 180-4), incremental, for checking that bytes crossed a stack intact.
//
// Uses the x86 SHA extensions when the CPU has them (about 1.5-2 GB/s) and portable code
// otherwise; both give the same digest. Not constant-time; not for secrets. A Sha256 object is
// used by one thread at a time; it allocates nothing.
//
//   Sha256 h;
//   h.Update(std::as_bytes(std::span(data)));
//   std::string hex = Sha256::Hex(h.Finish());
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace junction::net {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;
  enum class Impl { kAuto, kPortable };

  explicit Sha256(Impl impl = Impl::kAuto);
  void Update(std::span<const std::byte> data);
  // Pads, returns the digest and resets to the empty-message state.
  Digest Finish();

  static Digest Of(std::span<const std::byte> data);
  static std::string Hex(const Digest& d);
  // Whether kAuto uses the CPU's SHA extensions on this machine.
  static bool HardwareAccelerated();

 private:
  using BlockFn = void (*)(std::uint32_t* state, const std::uint8_t* blocks, std::size_t n);
  void Reset();

  BlockFn blocks_;
  std::uint32_t state_[8];
  std::uint8_t buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace junction::net
