// heap_prealloc_test.cc — a thread's pre-grown heap serves later mallocs from pages that are
// already mapped in (mincore), and keeps them after frees.
#include "junction/sched/heap_prealloc.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "junction/base/pages.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace junction::sched {
namespace {

constexpr std::size_t kBlock = 64 * 1024;
constexpr std::size_t kPregrow = 16 << 20;
// More than any earlier thread of this binary left mapped in an arena (frees past the default
// 128 KiB trim threshold are handed back), so without the pre-grow most of these pages would
// be new.
constexpr std::size_t kUse = 12 << 20;

// Allocates kUse bytes in kBlock pieces on the calling thread and returns the share of their
// whole pages that were mapped in before anything wrote to them.
double ResidentShareOfNewBlocks() {
  std::vector<void*> blocks;
  std::size_t resident = 0, pages = 0;
  for (std::size_t i = 0; i < kUse / kBlock; ++i) {
    void* p = std::malloc(kBlock);
    if (p == nullptr) break;
    const Residency r = ResidentPages(p, kBlock);
    resident += r.resident;
    pages += r.pages;
    blocks.push_back(p);
  }
  for (void* p : blocks) std::free(p);
  return pages == 0 ? 0.0 : static_cast<double>(resident) / static_cast<double>(pages);
}

TEST(HeapPreallocTest, WithoutItNewBlocksFault) {
  // The control: the same allocations on a fresh thread that did not pre-grow find most of
  // their pages unmapped, so the test below measures the pre-grow and not a warm arena. First
  // in the file: run in one process (not under ctest), the pre-grown arena of the test below
  // would be handed to this thread when that one exits.
#if defined(FAASNODE_ASAN)
  GTEST_SKIP() << "ASan replaces glibc's malloc: its arenas are what this test checks";
#endif
  double share = 1;
  std::thread t([&] { share = ResidentShareOfNewBlocks(); });
  t.join();
  EXPECT_LT(share, 0.5);
}

TEST(HeapPreallocTest, LaterMallocsFindTheirPagesMappedIn) {
#if defined(FAASNODE_ASAN)
  GTEST_SKIP() << "ASan replaces glibc's malloc: its arenas are what this test checks";
#endif
  ASSERT_TRUE(KeepFreedHeap(kPregrow)) << "mallopt(M_TRIM_THRESHOLD) refused";
  double first = 0, again = 0;
  std::size_t touched = 0;
  std::thread t([&] {
    touched = PregrowThreadHeap(kPregrow);
    first = ResidentShareOfNewBlocks();
    again = ResidentShareOfNewBlocks();  // after those blocks were freed: still mapped
  });
  t.join();
  EXPECT_GE(touched, kPregrow / PageSize());
  EXPECT_GE(first, 0.99) << "share of the new blocks' pages mapped in before first use";
  EXPECT_GE(again, 0.99) << "the same after a free: the trim threshold kept them";
}

TEST(HeapPreallocTest, PregrowCoreHeapsReadiesEveryCoreAfterStartUpWork) {
#if defined(FAASNODE_ASAN)
  GTEST_SKIP() << "ASan replaces glibc's malloc: its arenas are what this test checks";
#endif
  RuntimeConfig config;
  config.cores = testing::FirstCpus(2);
  config.heap_prealloc = kPregrow;
  std::vector<double> shares(config.cores.size(), 0);
  std::size_t touched = 0;
  testing::RunIn(config, [&] {
    auto t = PregrowCoreHeaps();
    ASSERT_TRUE(t.has_value()) << t.error().message();
    touched = *t;
    std::vector<JoinHandle> hs;
    for (std::size_t i = 0; i < shares.size(); ++i) {
      auto h = Spawn([&shares, i] { shares[i] = ResidentShareOfNewBlocks(); },
                     {.core = static_cast<int>(i), .stealable = false});
      ASSERT_TRUE(h.has_value());
      hs.push_back(std::move(*h));
    }
    for (auto& h : hs) h.Join();
  });
  EXPECT_GE(touched, shares.size() * (kPregrow / PageSize()));
  for (std::size_t i = 0; i < shares.size(); ++i) {
    EXPECT_GE(shares[i], 0.99) << "core " << i << ": share of new blocks' pages mapped in";
  }
}

long ThreadMinorFaults() {
  rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

// Writes every page of a fresh 1 MiB buffer, then frees it.
void UseMebibyte() {
  constexpr std::size_t kBuf = 1 << 20;
  auto* p = static_cast<volatile char*>(std::malloc(kBuf));
  ASSERT_NE(p, nullptr);
  for (std::size_t off = 0; off < kBuf; off += PageSize()) p[off] = 1;
  std::free(const_cast<char*>(p));
}

TEST(HeapPreallocTest, BuffersAboveTheDefaultMmapThresholdAreReusedNotRemapped) {
  // Raising the trim threshold freezes glibc's mmap threshold at 128 KiB; KeepFreedHeap sets
  // it higher, so a 1 MiB buffer freed and taken again reuses its pages. Left at 128 KiB,
  // each use is a fresh mmap: 256 page faults.
#if defined(FAASNODE_ASAN)
  GTEST_SKIP() << "ASan replaces glibc's malloc: its arenas are what this test checks";
#endif
  ASSERT_TRUE(KeepFreedHeap(1 << 20)) << "mallopt refused";
  UseMebibyte();
  const long before = ThreadMinorFaults();
  UseMebibyte();
  EXPECT_LT(ThreadMinorFaults() - before, 16);
}

}  // namespace
}  // namespace junction::sched
