// sha256_test.cc — SHA-256 against FIPS 180-4 example vectors, padding boundaries, streaming.
#include "sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace faasnode::functions {
namespace {

// FIPS 180-4 examples (NIST CSRC "Examples with intermediate values", SHA256.pdf and
// SHA2_Additional): one block, two blocks, the 896-bit message, a million 'a', and empty.
TEST(Sha256Test, FipsExampleVectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklm"
                      "nopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Lengths around the padding boundaries (55/56 bytes: the length fits or spills into a second
// block; 63/64/65: exact block), expected values from coreutils sha256sum.
TEST(Sha256Test, PaddingBoundaries) {
  struct Case {
    std::size_t n;
    const char* hex;
  };
  const Case cases[] = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
      {127, "70156a14adbabf98cff3a71c7084b417abf057a8efd27329ca36b7202c87d81f"},
      {128, "24da1b81d0b16df6428eee73c69fcb2a93c76bc6df706f0c6670fe6bfe800464"},
      {1000, "44f8354494a5ba03ba1792a8d3e9c534c47a9181980fde7a3f44b06ef2ae7c7f"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Sha256Hex(std::string(c.n, 'x')), c.hex) << c.n << " bytes of 'x'";
  }
}

// Every byte value, fed in every split: streaming equals one shot.
TEST(Sha256Test, StreamingInAnySplitEqualsOneShot) {
  std::string msg;
  for (int r = 0; r < 4; ++r) {
    for (int b = 0; b < 256; ++b) msg.push_back(static_cast<char>(b));
  }
  const std::string want = "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9";
  ASSERT_EQ(Sha256Hex(msg), want);
  for (std::size_t step : {1u, 3u, 55u, 63u, 64u, 65u, 200u}) {
    Sha256 h;
    for (std::size_t i = 0; i < msg.size(); i += step)
      h.Update(std::string_view(msg).substr(i, step));
    EXPECT_EQ(ToHex(h.Final()), want) << "step " << step;
  }
}

TEST(Sha256Test, ResetStartsOver) {
  Sha256 h;
  h.Update("garbage");
  (void)h.Final();
  h.Reset();
  h.Update("abc");
  EXPECT_EQ(ToHex(h.Final()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace faasnode::functions
