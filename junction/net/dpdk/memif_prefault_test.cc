// memif_prefault_test.cc — PrefaultMemifRegions on a shared memfd named as DPDK's memif PMD
// names its regions: every page mapped in afterwards (mincore), contents unchanged, other
// mappings left alone. No EAL, no root.
#include "junction/net/dpdk/memif_prefault.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "junction/base/pages.h"

namespace junction::net::dpdk {
namespace {

// A shared memfd mapping, read-write, unmapped and closed at the end.
struct SharedMapping {
  SharedMapping(const char* name, std::size_t bytes) : len(bytes) {
    fd = memfd_create(name, 0);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(len)) != 0) return;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) addr = static_cast<char*>(p);
  }
  ~SharedMapping() {
    if (addr != nullptr) munmap(addr, len);
    if (fd >= 0) close(fd);
  }
  int fd = -1;
  char* addr = nullptr;
  std::size_t len;
};

TEST(MemifPrefaultTest, MapsInEveryPageOfARegionAndNothingElse) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t len = 256 * page;
  SharedMapping region("memif_region_9", len);
  SharedMapping other("not_a_region", len);
  ASSERT_NE(region.addr, nullptr) << "memfd_create/mmap failed: " << std::strerror(errno);
  ASSERT_NE(other.addr, nullptr);
  std::memcpy(region.addr + 7 * page + 3, "frame", 5);  // one page touched, with data in it
  EXPECT_EQ(ResidentPages(region.addr, len).resident, 1u);

  auto found = MemifRegionMappings();
  ASSERT_TRUE(found.has_value()) << found.error().message();
  ASSERT_EQ(found->size(), 1u) << "only the memif_region_ mapping is a region";
  EXPECT_EQ((*found)[0].lo, reinterpret_cast<std::uintptr_t>(region.addr));
  EXPECT_EQ((*found)[0].hi, reinterpret_cast<std::uintptr_t>(region.addr) + len);

  auto r = PrefaultMemifRegions();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(*r, len);
  EXPECT_EQ(ResidentPages(region.addr, len).resident, 256u) << "every page of the region mapped in";
  EXPECT_EQ(std::memcmp(region.addr + 7 * page + 3, "frame", 5), 0) << "contents unchanged";
  EXPECT_EQ(region.addr[0], 0);
  EXPECT_EQ(ResidentPages(other.addr, len).resident, 0u) << "another mapping was touched";
}

TEST(MemifPrefaultTest, NoRegionsIsNoWork) {
  auto r = PrefaultMemifRegions();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(*r, 0u);
}

}  // namespace
}  // namespace junction::net::dpdk
