// burst_guard.cc — see burst_guard.h.
#include "junction/net/dpdk/burst_guard.h"

#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <mutex>

namespace junction::net::dpdk {
namespace {

thread_local sigjmp_buf* t_recovery = nullptr;
std::atomic<std::uint64_t> g_faults{0};
struct sigaction g_prev_segv{};
struct sigaction g_prev_bus{};

void OnFault(int sig, siginfo_t*, void*) {
  if (sigjmp_buf* r = t_recovery) {
    t_recovery = nullptr;
    siglongjmp(*r, 1);
  }
  // Not a guarded burst: put the previous action back and return; the faulting instruction
  // runs again and faults under it (a crash report, ASan's, or the default core dump).
  sigaction(sig, sig == SIGBUS ? &g_prev_bus : &g_prev_segv, nullptr);
}

}  // namespace

void InstallBurstGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = &OnFault;
    // SA_NODEFER: the handler leaves by siglongjmp without restoring the mask, so the signal
    // must not be blocked while it runs, or the next fault on this thread would be fatal.
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_prev_segv);
    sigaction(SIGBUS, &sa, &g_prev_bus);
  });
}

// Not inlined: sigsetjmp's frame must stay alive for as long as the burst runs.
__attribute__((noinline)) GuardedResult GuardedBurst(int (*burst)(void* ctx), void* ctx) {
  sigjmp_buf recovery;
  if (sigsetjmp(recovery, 0) != 0) {
    g_faults.fetch_add(1, std::memory_order_relaxed);
    return {0, true};
  }
  t_recovery = &recovery;
  const int n = burst(ctx);
  t_recovery = nullptr;
  return {n, false};
}

std::uint64_t BurstFaults() { return g_faults.load(std::memory_order_relaxed); }

}  // namespace junction::net::dpdk
