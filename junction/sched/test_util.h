// test_util.h — helpers shared by the junction/sched tests: run a body inside a runtime.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "junction/sched/runtime.h"
#include "junction/sched/runtime_config.h"

namespace junction::sched::testing {

// The first `n` usable CPUs (fewer if the machine has fewer).
inline std::vector<int> FirstCpus(int n) {
  auto cpus = AllowedCpus();
  if (static_cast<int>(cpus.size()) > n) cpus.resize(n);
  return cpus;
}

// Nanoseconds the calling kthread has spent runnable but waiting for a CPU (schedstat's
// run_delay); 0 when unreadable. Per kthread: compare readings taken on one kthread only.
inline long long RunDelayNs() {
  std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return 0;
  long long run = 0, wait = 0;
  const int n = std::fscanf(f, "%lld %lld", &run, &wait);
  std::fclose(f);
  return n == 2 ? wait : 0;
}

inline void RunIn(RuntimeConfig config, std::function<void()> body) {
  auto rt = Runtime::Create(config);
  ASSERT_TRUE(rt.has_value()) << rt.error().message();
  auto s = (*rt)->Run(std::move(body));
  ASSERT_TRUE(s.has_value()) << s.error().message();
}

inline void RunOnCores(int n, std::function<void()> body) {
  RuntimeConfig c;
  c.cores = FirstCpus(n);
  RunIn(c, std::move(body));
}

}  // namespace junction::sched::testing
