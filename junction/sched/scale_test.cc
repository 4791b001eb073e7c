// scale_test.cc — 100k concurrent uthreads with 64 KiB stacks fit in 1.5 GiB of RSS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/sync.h"
#include "junction/sched/test_util.h"

namespace junction::sched {
namespace {
using testing::FirstCpus;

long ReadProcLong(const std::string& path) {
  std::ifstream f(path);
  long v = -1;
  f >> v;
  return v;
}

long RssKib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Each stack's guard page is its own kernel mapping; 100k stacks need ~200k of them.
class MapCountGuard {
 public:
  bool Ensure(long need, std::string* why) {
    old_ = ReadProcLong("/proc/sys/vm/max_map_count");
    if (old_ >= need) return true;
    std::ofstream f("/proc/sys/vm/max_map_count");
    f << need;
    f.close();
    if (ReadProcLong("/proc/sys/vm/max_map_count") >= need) {
      raised_ = true;
      return true;
    }
    *why = "vm.max_map_count is " + std::to_string(old_) + " and cannot be raised to " +
           std::to_string(need) + " without root (sysctl -w vm.max_map_count=" +
           std::to_string(need) + ")";
    return false;
  }
  ~MapCountGuard() {
    if (raised_) std::ofstream("/proc/sys/vm/max_map_count") << old_;
  }

 private:
  long old_ = 0;
  bool raised_ = false;
};

TEST(Scale, HundredThousandParkedUthreadsStayUnderOneAndAHalfGiB) {
  constexpr int kThreads = 100'000;
  MapCountGuard maps;
  std::string why;
  if (!maps.Ensure(262144, &why)) GTEST_SKIP() << why;
  auto rt = Runtime::Create(RuntimeConfig{.cores = FirstCpus(2), .stack_size = 64 * 1024});
  ASSERT_TRUE(rt.has_value());
  long rss_before = 0, rss_parked = 0;
  int finished = 0;
  ASSERT_TRUE((*rt)->Run([&] {
    rss_before = RssKib();
    Mutex mu;
    CondVar cv;
    bool go = false;
    WaitGroup parked, done;
    parked.Add(kThreads);
    done.Add(kThreads);
    std::atomic<int> count{0};
    for (int i = 0; i < kThreads; ++i) {
      auto s = SpawnDetached([&] {
        std::unique_lock<Mutex> l(mu);
        parked.Done();
        cv.Wait(l, [&] { return go; });
        count++;
        done.Done();
      });
      ASSERT_TRUE(s.has_value()) << s.error().message();
    }
    parked.Wait();
    rss_parked = RssKib();
    {
      std::lock_guard<Mutex> l(mu);
      go = true;
      cv.NotifyAll();
    }
    done.Wait();
    finished = count.load();
  }).has_value());
  EXPECT_EQ(finished, kThreads);
  const double gib = (rss_parked - rss_before) / 1024.0 / 1024.0;
  std::printf("100k parked uthreads: RSS grew by %.3f GiB (%.1f KiB each)\n", gib,
              (rss_parked - rss_before) / static_cast<double>(kThreads));
  RecordProperty("rss_growth_gib", std::to_string(gib));
  EXPECT_LE(rss_parked / 1024.0 / 1024.0, 1.5);
}

}  // namespace
}  // namespace junction::sched
