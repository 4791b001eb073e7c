// stack_pool_test.cc — StackPool::Reserve maps the stacks it is asked for, with the top of
// each already mapped in (mincore), and Get hands them out without mapping more.
#include "junction/sched/stack_pool.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "junction/base/pages.h"

namespace junction::sched {
namespace {

TEST(StackPoolTest, ReserveMapsStacksWithTheirTopsMappedIn) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  constexpr std::size_t kSize = 64 * 1024;
  constexpr std::size_t kTouch = 16 * 1024;
  StackPool pool(StackPoolOptions{.stack_size = kSize, .guard = true, .cache = 1024});
  ASSERT_TRUE(pool.Reserve(40, kTouch).has_value());
  EXPECT_GE(pool.mapped_stacks(), 40u);
  const std::size_t mapped = pool.mapped_stacks();
  std::vector<char*> got;
  for (int i = 0; i < 40; ++i) {
    auto s = pool.Get();
    ASSERT_TRUE(s.has_value()) << s.error().message();
    got.push_back(*s);
    EXPECT_EQ(ResidentPages(*s + kSize - kTouch, kTouch).resident, kTouch / page) << "stack " << i;
    EXPECT_EQ(ResidentPages(*s, page).resident, 0u) << "stack " << i << ": its bottom page was mapped too";
  }
  EXPECT_EQ(pool.mapped_stacks(), mapped) << "Get mapped more stacks after Reserve";
  for (char* s : got) pool.Put(s);
}

TEST(StackPoolTest, ReserveWithoutTouchOnlyMaps) {
  StackPool pool(StackPoolOptions{.stack_size = 64 * 1024, .guard = false, .cache = 1024});
  ASSERT_TRUE(pool.Reserve(3, 0).has_value());
  EXPECT_GE(pool.mapped_stacks(), 3u);
  EXPECT_EQ(pool.free_stacks(), pool.mapped_stacks());
}

}  // namespace
}  // namespace junction::sched
