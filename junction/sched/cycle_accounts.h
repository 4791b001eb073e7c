// cycle_accounts.h — per-core cycle accounting: which account owned every TSC cycle of a core.
//
// Each core keeps two AccountTables: the active one it charges at every switch, and the one
// it closed last, which the single reader (Runtime::CloseInterval) copies out. Tables are
// touched only by their core, except the closed one, which the reader reads after the core
// has published it and before it asks for the next close — so there is no lock and no
// system call. Every cycle between an interval's tsc_begin and tsc_end is in exactly one
// account: busy (user accounts and kNet) + overhead (kRuntime, kPoll) + idle (kIdle) ==
// tsc_end - tsc_begin, exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "junction/sched/thread.h"

namespace junction::sched {

// Account ids for calls: a per-core sequence number above an 8-bit tag (the core). The
// account tables place consecutive ids of one tag in neighbouring slots (AccountTable::Hash).
inline constexpr int kAccountTagBits = 8;
inline constexpr AccountId kAccountTagMask = (AccountId{1} << kAccountTagBits) - 1;
// `seq` counts from 1 on each core (so the id is never below kFirstUser); `tag` < 256.
constexpr AccountId SequentialAccount(std::uint64_t seq, unsigned tag) {
  return (seq << kAccountTagBits) | (tag & kAccountTagMask);
}

struct AccountCycles {
  AccountId account;
  std::uint64_t cycles;
};

// One core's closed interval.
struct CoreInterval {
  int core = 0;  // index into RuntimeConfig::cores
  int cpu = 0;   // the CPU id the core is pinned to
  std::uint64_t tsc_begin = 0;
  std::uint64_t tsc_end = 0;
  std::uint64_t idle = 0;     // kIdle: the kthread was blocked
  std::uint64_t runtime = 0;  // kRuntime: scheduling work
  std::uint64_t poll = 0;     // kPoll: spinning for work that did not come
  std::vector<AccountCycles> busy;  // every other account (kNet, user accounts), unordered

  std::uint64_t elapsed() const { return tsc_end - tsc_begin; }
  std::uint64_t overhead() const { return runtime + poll; }
  std::uint64_t busy_total() const {
    std::uint64_t s = 0;
    for (const auto& a : busy) s += a.cycles;
    return s;
  }
};

// All cores' intervals closed by one CloseInterval() call, in core order.
struct IntervalSnapshot {
  std::uint64_t seq = 0;
  double tsc_hz = 0;
  std::vector<CoreInterval> cores;
};

class AccountTable {
 public:
  AccountTable();

  // Starts an empty interval at `tsc_begin`.
  void Reset(std::uint64_t tsc_begin);
  // Adds cycles to an account. Allocates only when the interval has seen more distinct
  // accounts than ever before on this core (the table doubles).
  void Add(AccountId account, std::uint64_t cycles) {
    if (account < accounts::kFirstUser) {
      classes_[account] += cycles;
    } else {
      AddUser(account, cycles);
    }
  }
  // Starts loading the slot a user account would use, so that its first Add (when it is
  // switched out, a call's run later) does not wait on memory: a table of a few thousand
  // calls an interval is spread over ~100 KiB by the hash, and that Add missed the cache.
  void Prefetch(AccountId account) const {
    if (account >= accounts::kFirstUser) {
      __builtin_prefetch(&slots_[Hash(account) & (slots_.size() - 1)], 1);
    }
  }
  void Close(std::uint64_t tsc_end) { tsc_end_ = tsc_end; }
  void ExportTo(CoreInterval* out) const;

 private:
  struct Slot {
    AccountId key;  // 0 = empty (user accounts are >= kFirstUser)
    std::uint64_t cycles;
  };
  // Where an account's probe starts. Accounts made by SequentialAccount() on one core differ
  // by one above the tag bits, so a core's calls of an interval take neighbouring slots (four
  // to a cache line, walked in order): a multiplicative hash spread them over the whole table
  // and every call's first charge missed the cache (5% of a dpdk worker's samples at 400k
  // calls/s, load.md). The tag picks a far-off start for each core's stream, so a call that
  // migrated from another core rarely lands inside this core's run; when it does, it probes
  // to the run's end (sequential memory, still correct).
  static std::size_t Hash(AccountId a) {
    return static_cast<std::size_t>((a >> kAccountTagBits) + (a & kAccountTagMask) * 0x9E3779B1ull);
  }
  void AddUser(AccountId account, std::uint64_t cycles);
  void Grow();

  std::uint64_t tsc_begin_ = 0;
  std::uint64_t tsc_end_ = 0;
  std::uint64_t classes_[accounts::kFirstUser] = {};
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> used_;  // indices of occupied slots, for O(used) reset and export
};

}  // namespace junction::sched
