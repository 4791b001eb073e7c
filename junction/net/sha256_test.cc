// sha256_test.cc — SHA-256 against FIPS 180-4 vectors, and the SHA-NI path against the
// portable one on random data split at random points.
#include "junction/net/sha256.h"

#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

namespace junction::net {
namespace {

std::string HexOf(std::string_view s, Sha256::Impl impl) {
  Sha256 h(impl);
  h.Update(std::as_bytes(std::span(s.data(), s.size())));
  return Sha256::Hex(h.Finish());
}

TEST(Sha256Test, KnownVectors) {
  for (auto impl : {Sha256::Impl::kAuto, Sha256::Impl::kPortable}) {
    EXPECT_EQ(HexOf("", impl), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(HexOf("abc", impl),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(HexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", impl),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // One million 'a' (FIPS 180-2 appendix B.3), fed in uneven pieces.
    Sha256 h(impl);
    std::string a(1000, 'a');
    for (int i = 0; i < 1000; ++i) h.Update(std::as_bytes(std::span(a.data(), a.size())));
    EXPECT_EQ(Sha256::Hex(h.Finish()),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
}

TEST(Sha256Test, HardwareAndPortableAgreeOnRandomSplits) {
  std::mt19937_64 rng(42);
  std::vector<std::byte> data(300000);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  for (int round = 0; round < 20; ++round) {
    const std::size_t len = rng() % data.size();
    Sha256 fast, slow(Sha256::Impl::kPortable);
    std::size_t off = 0;
    while (off < len) {
      const std::size_t n = std::min<std::size_t>(len - off, 1 + rng() % 5000);
      fast.Update(std::span(data).subspan(off, n));
      slow.Update(std::span(data).subspan(off, n));
      off += n;
    }
    const auto d = fast.Finish();
    EXPECT_EQ(Sha256::Hex(d), Sha256::Hex(slow.Finish())) << "length " << len;
    EXPECT_EQ(d, Sha256::Of(std::span(data).first(len)));
  }
}

}  // namespace
}  // namespace junction::net
