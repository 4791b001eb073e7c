// buffer_pool_test.cc — BufferPool: blocks are reused up to the bound, and Prime hands out
// blocks whose pages are already mapped (mincore), raising the bound to what it primed.
#include "junction/net/tcp/buffer_pool.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace junction::net::tcp {
namespace {

constexpr std::size_t kBlock = 256 * 1024;

// Pages of [p, p + len) (the whole pages inside it) that are mapped in, and how many there are.
std::pair<std::size_t, std::size_t> Resident(const std::byte* p, std::size_t len) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + len) & ~(page - 1);
  std::vector<unsigned char> vec((hi - lo) / page);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, vec.data()) != 0) return {0, vec.size()};
  std::size_t in = 0;
  for (unsigned char v : vec) in += v & 1;
  return {in, vec.size()};
}

TEST(BufferPoolTest, KeepsAtMostMaxFree) {
  BufferPool pool(kBlock, 2);
  std::vector<std::unique_ptr<std::byte[]>> held;
  for (int i = 0; i < 4; ++i) held.push_back(pool.Take());
  EXPECT_EQ(pool.bytes_in_use(), 4 * kBlock);
  for (auto& b : held) pool.Give(std::move(b));
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  EXPECT_EQ(pool.bytes_kept(), 2 * kBlock) << "blocks past max_free go back to the allocator";
}

TEST(BufferPoolTest, PrimedBlocksAreMappedAndKept) {
  BufferPool pool(kBlock, 1);
  pool.Prime(5);
  EXPECT_EQ(pool.bytes_kept(), 5 * kBlock);
  std::vector<std::unique_ptr<std::byte[]>> held;
  for (int i = 0; i < 5; ++i) {
    held.push_back(pool.Take());
    const auto [in, pages] = Resident(held.back().get(), kBlock);
    EXPECT_EQ(in, pages) << "block " << i << ": " << in << " of " << pages << " pages mapped";
  }
  EXPECT_EQ(pool.bytes_kept(), 0u);
  for (auto& b : held) pool.Give(std::move(b));
  EXPECT_EQ(pool.bytes_kept(), 5 * kBlock) << "Prime raised the bound to what it primed";
  pool.Prime(3);  // already more than 3 free: nothing new
  EXPECT_EQ(pool.bytes_kept(), 5 * kBlock);
}

}  // namespace
}  // namespace junction::net::tcp
