// burst_guard_test.cc — GuardedBurst against memory unmapped under it: by the burst itself,
// and by another thread while the burst polls (the memif peer-exit race), and a fault outside
// any guarded burst still ends the process.
#include "junction/net/dpdk/burst_guard.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace junction::net::dpdk {
namespace {

struct Region {
  volatile std::uint64_t* words = nullptr;
  std::size_t len = 0;
};

Region Map(std::size_t pages) {
  const std::size_t len = pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return {static_cast<volatile std::uint64_t*>(p), len};
}

int SumWords(void* ctx) {
  auto* r = static_cast<Region*>(ctx);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < r->len / sizeof(std::uint64_t); i += 512) sum += r->words[i];
  return static_cast<int>(sum & 0xff) + 1;
}

int UnmapThenRead(void* ctx) {
  auto* r = static_cast<Region*>(ctx);
  munmap(const_cast<std::uint64_t*>(r->words), r->len);
  return static_cast<int>(r->words[0]);  // faults: the page is gone
}

TEST(BurstGuard, ABurstThatDoesNotFaultReturnsItsResult) {
  InstallBurstGuard();
  Region r = Map(4);
  r.words[0] = 41;
  const GuardedResult g = GuardedBurst(&SumWords, &r);
  EXPECT_FALSE(g.faulted);
  EXPECT_EQ(g.n, 42);
  munmap(const_cast<std::uint64_t*>(r.words), r.len);
}

TEST(BurstGuard, AFaultInsideABurstIsAnAbandonedBurstEveryTime) {
  InstallBurstGuard();
  const std::uint64_t before = BurstFaults();
  for (int i = 0; i < 3; ++i) {  // again and again on one thread: the signal is not left blocked
    Region r = Map(1);
    const GuardedResult g = GuardedBurst(&UnmapThenRead, &r);
    EXPECT_TRUE(g.faulted) << "round " << i;
    EXPECT_EQ(g.n, 0);
  }
  EXPECT_EQ(BurstFaults() - before, 3u);
  // And a clean burst right after still works.
  Region r = Map(1);
  EXPECT_FALSE(GuardedBurst(&SumWords, &r).faulted);
  munmap(const_cast<std::uint64_t*>(r.words), r.len);
}

// The memif race: one thread polls the region in guarded bursts while another unmaps it.
TEST(BurstGuard, APollerSurvivesAnotherThreadUnmappingItsRings) {
  InstallBurstGuard();
  Region r = Map(64);
  std::atomic<bool> unmapped{false};
  std::atomic<bool> started{false};
  int faults = 0;
  int bursts_after = 0;
  std::thread poller([&] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      started.store(true);
      if (unmapped.load()) {
        // After the unmap a real PMD sees "not connected" and reads nothing; here the
        // poller stops touching the region once it has seen its fault.
        if (faults > 0 && ++bursts_after > 100) return;
        if (faults > 0) continue;
      }
      if (GuardedBurst(&SumWords, &r).faulted) ++faults;
    }
  });
  while (!started.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  munmap(const_cast<std::uint64_t*>(r.words), r.len);
  unmapped.store(true);
  poller.join();
  // The poller may have been between bursts when the unmap landed, so its next burst is the
  // one that faults: either way exactly one fault, and the thread carried on.
  EXPECT_EQ(faults, 1);
  EXPECT_GT(bursts_after, 100);
}

TEST(BurstGuardDeathTest, AFaultOutsideAGuardedBurstStillEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        InstallBurstGuard();
        Region r = Map(1);
        munmap(const_cast<std::uint64_t*>(r.words), r.len);
        std::uint64_t v = r.words[0];
        std::printf("%llu\n", static_cast<unsigned long long>(v));
      },
      "");
}

}  // namespace
}  // namespace junction::net::dpdk
