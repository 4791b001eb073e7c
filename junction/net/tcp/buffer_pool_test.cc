// buffer_pool_test.cc — BufferPool: blocks are reused up to the bound, and Prime hands out
// blocks whose pages are already mapped (mincore), raising the bound to what it primed.
#include "junction/net/tcp/buffer_pool.h"

#include <gtest/gtest.h>

#include <vector>

#include "junction/base/pages.h"

namespace junction::net::tcp {
namespace {

constexpr std::size_t kBlock = 256 * 1024;

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
  pool.Prime(5, kBlock);
  EXPECT_EQ(pool.bytes_kept(), 5 * kBlock);
  std::vector<std::unique_ptr<std::byte[]>> held;
  for (int i = 0; i < 5; ++i) {
    held.push_back(pool.Take());
    const Residency r = ResidentPages(held.back().get(), kBlock);
    EXPECT_EQ(r.resident, r.pages) << "block " << i << ": " << r.resident << " of " << r.pages
                                   << " pages mapped";
  }
  EXPECT_EQ(pool.bytes_kept(), 0u);
  for (auto& b : held) pool.Give(std::move(b));
  EXPECT_EQ(pool.bytes_kept(), 5 * kBlock) << "Prime raised the bound to what it primed";
  pool.Prime(3, kBlock);  // already more than 3 free: nothing new
  EXPECT_EQ(pool.bytes_kept(), 5 * kBlock);
}

TEST(BufferPoolTest, PrimingPartOfABlockMapsOnlyThatPart) {
  constexpr std::size_t kPart = 16 * 1024;
  BufferPool pool(kBlock, 1);
  pool.Prime(2, kPart);
  for (int i = 0; i < 2; ++i) {
    auto b = pool.Take();
    const Residency head = ResidentPages(b.get(), kPart);
    EXPECT_EQ(head.resident, head.pages) << "block " << i << ": the primed part is mapped in";
    const Residency rest = ResidentPages(b.get() + kPart, kBlock - kPart);
    EXPECT_LT(rest.resident, rest.pages / 2) << "block " << i << ": the rest was left alone";
    pool.Give(std::move(b));
  }
}

}  // namespace
}  // namespace junction::net::tcp
