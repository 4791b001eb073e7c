// checksum_test.cc — the word-at-a-time sums of checksum.cc against RFC 1071 done the plain
// way: big-endian 16-bit words of the bytes as sent, end-around carries, over every length and
// alignment a segment can have, and against frames whose checksum is known.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "junction/net/tcp/tcp_io.h"

namespace junction::net::tcp {
namespace {

// RFC 1071 section 4.1, summing network-order 16-bit words; returns the folded sum.
std::uint16_t ReferenceSum(const std::vector<std::uint8_t>& bytes) {
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 2) {
    const std::uint32_t hi = bytes[i];
    const std::uint32_t lo = i + 1 < bytes.size() ? bytes[i + 1] : 0;
    s += (hi << 8) | lo;
    s = (s & 0xFFFF) + (s >> 16);
  }
  return static_cast<std::uint16_t>(s);
}

std::vector<std::uint8_t> PseudoHeader(Ipv4Addr src, Ipv4Addr dst, std::size_t len) {
  const std::uint32_t s = src.host_order(), d = dst.host_order();
  return {std::uint8_t(s >> 24), std::uint8_t(s >> 16), std::uint8_t(s >> 8), std::uint8_t(s),
          std::uint8_t(d >> 24), std::uint8_t(d >> 16), std::uint8_t(d >> 8), std::uint8_t(d),
          0, 6, std::uint8_t(len >> 8), std::uint8_t(len)};
}

// Our sums are over little-endian words: the folded result is the reference byte-swapped.
std::uint16_t Swap(std::uint16_t v) { return static_cast<std::uint16_t>((v >> 8) | (v << 8)); }

TEST(Checksum, EveryLengthAndAlignmentMatchesTheWordAtATimeSum) {
  std::mt19937 rng(1071);
  std::vector<std::uint8_t> buf(1600 + 16);
  for (int round = 0; round < 20; ++round) {
    for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    if (round == 0) std::fill(buf.begin(), buf.end(), 0xFF);  // every carry taken
    for (std::size_t off = 0; off < 8; ++off) {
      for (std::size_t len = 0; len <= 1600; len += (len < 80 ? 1 : 37)) {
        std::vector<std::uint8_t> bytes(buf.begin() + off, buf.begin() + off + len);
        const auto* p = reinterpret_cast<const std::byte*>(buf.data() + off);
        const std::uint16_t got = ChecksumFold(ChecksumAdd(0, std::span(p, len)));
        ASSERT_EQ(got == 0 ? 0xFFFF : got, Swap(ReferenceSum(bytes)) == 0 ? 0xFFFF : Swap(ReferenceSum(bytes)))
            << "round " << round << ", offset " << off << ", " << len << " bytes";
      }
    }
  }
}

TEST(Checksum, AStartingSumIsCarriedThrough) {
  const std::uint8_t data[] = {0xFF, 0xFF, 0x00, 0x01, 0x80};
  const auto* p = reinterpret_cast<const std::byte*>(data);
  for (std::uint32_t start : {0u, 1u, 0xFFFFu, 0x1FFFEu, 0xFFFFFFFFu}) {
    // start + data, as the reference sees it: start's 16-bit pieces first, then the bytes.
    std::vector<std::uint8_t> bytes;
    const std::uint16_t folded = ChecksumFold(start);
    bytes.push_back(static_cast<std::uint8_t>(folded & 0xFF));  // little-endian word order
    bytes.push_back(static_cast<std::uint8_t>(folded >> 8));
    bytes.insert(bytes.end(), data, data + sizeof(data));
    const std::uint16_t got = ChecksumFold(ChecksumAdd(start, std::span(p, sizeof(data))));
    const std::uint16_t want = Swap(ReferenceSum(bytes));
    EXPECT_EQ(got == 0 ? 0xFFFF : got, want == 0 ? 0xFFFF : want) << "start " << start;
  }
}

// Sums whose 64-bit halves overflow when they are folded: all-ones words with a small tail
// (the two chains plus the tail land exactly on 2^64), so the carry out of the fold must go
// around too. Random data almost never gets there.
TEST(Checksum, ACarryOutOfTheFinalFoldGoesAround) {
  for (std::size_t ones = 8; ones <= 64; ones += 8) {
    for (std::uint8_t last : {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
      for (std::size_t tail = 1; tail <= 7; ++tail) {
        std::vector<std::uint8_t> bytes(ones, 0xFF);
        for (std::size_t i = 0; i < tail; ++i) bytes.push_back(i == 0 ? last : 0);
        const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
        const std::uint16_t got = ChecksumFold(ChecksumAdd(0, std::span(p, bytes.size())));
        const std::uint16_t want = Swap(ReferenceSum(bytes));
        ASSERT_EQ(got == 0 ? 0xFFFF : got, want == 0 ? 0xFFFF : want)
            << ones << " bytes of 0xFF, then " << int(last) << " and " << tail - 1 << " zeros";
      }
    }
  }
}

TEST(Checksum, ThePseudoHeaderSumsAsItsBytes) {
  std::mt19937 rng(9293);
  for (int i = 0; i < 10000; ++i) {
    const Ipv4Addr src(static_cast<std::uint32_t>(rng()));
    const Ipv4Addr dst(i == 0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng()));
    const std::size_t len = i == 0 ? 0xFFFF : rng() % 65536;
    const std::uint16_t got = ChecksumFold(PseudoHeaderSum(src, dst, len));
    const std::uint16_t want = Swap(ReferenceSum(PseudoHeader(src, dst, len)));
    ASSERT_EQ(got == 0 ? 0xFFFF : got, want == 0 ? 0xFFFF : want) << i;
  }
}

// A SYN captured from Linux (10.0.0.1:40000 -> 10.0.0.2:80, MSS 1460): its checksum verifies,
// and one flipped bit does not.
TEST(Checksum, ARealSegmentVerifiesAndACorruptOneDoesNot) {
  std::uint8_t seg[24] = {0x9c, 0x40, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
                          0x60, 0x02, 0xfa, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4};
  const Ipv4Addr a(10, 0, 0, 1), b(10, 0, 0, 2);
  // Fill in the checksum the reference way, then check that ours accepts it.
  std::vector<std::uint8_t> all = PseudoHeader(a, b, sizeof(seg));
  all.insert(all.end(), seg, seg + sizeof(seg));
  const std::uint16_t ck = static_cast<std::uint16_t>(~ReferenceSum(all));
  seg[16] = static_cast<std::uint8_t>(ck >> 8);
  seg[17] = static_cast<std::uint8_t>(ck);
  EXPECT_TRUE(TcpChecksumOk(a, b, std::span(reinterpret_cast<const std::byte*>(seg), sizeof(seg))));
  seg[23] ^= 0x10;
  EXPECT_FALSE(TcpChecksumOk(a, b, std::span(reinterpret_cast<const std::byte*>(seg), sizeof(seg))));
}

}  // namespace
}  // namespace junction::net::tcp
