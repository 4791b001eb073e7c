// burst_guard.cc — see burst_guard.h.
#include "junction/net/dpdk/burst_guard.h"

#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <mutex>

namespace junction::net::dpdk {
namespace {

// The recovery point. GCC's __builtin_setjmp keeps three words (frame, stack, resume label)
// and makes the function save every callee-saved register itself: ~2 ns against ~8 ns for
// glibc's sigsetjmp (its pointer mangling, shadow-stack check and mask bookkeeping), and a
// memif round trip takes four guarded bursts. Under AddressSanitizer the glibc pair stays:
// ASan intercepts siglongjmp to unpoison the abandoned frames, and knows nothing of the
// builtin.
#if defined(__SANITIZE_ADDRESS__)
#define FAASNODE_BURST_GUARD_GLIBC 1
using Recovery = sigjmp_buf;
#else
using Recovery = void* [5];
#endif
thread_local Recovery* t_recovery = nullptr;
std::atomic<std::uint64_t> g_faults{0};
struct sigaction g_prev_segv{};
struct sigaction g_prev_bus{};

void OnFault(int sig, siginfo_t*, void*) {
  if (Recovery* r = t_recovery) {
    t_recovery = nullptr;
#ifdef FAASNODE_BURST_GUARD_GLIBC
    siglongjmp(*r, 1);
#else
    __builtin_longjmp(*r, 1);
#endif
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
  Recovery recovery;
#ifdef FAASNODE_BURST_GUARD_GLIBC
  if (sigsetjmp(recovery, 0) != 0) {
#else
  if (__builtin_setjmp(recovery) != 0) {
#endif
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
