// cycle_accounts_test.cc — the account table alone: every charge lands on its account, whatever
// the mix of one core's sequential call ids, ids from other cores and the table's growth.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "junction/sched/cycle_accounts.h"

namespace junction::sched {
namespace {

std::map<AccountId, std::uint64_t> Exported(const AccountTable& t) {
  CoreInterval out;
  t.ExportTo(&out);
  std::map<AccountId, std::uint64_t> m;
  for (const AccountCycles& a : out.busy) {
    EXPECT_TRUE(m.emplace(a.account, a.cycles).second) << "account " << a.account << " exported twice";
  }
  return m;
}

TEST(AccountTable, SequentialForeignAndClassAccountsAllSumExactly) {
  AccountTable t;
  std::mt19937_64 rng(7);
  std::uint64_t seq[4] = {1, 1, 1, 1};
  for (int interval = 0; interval < 6; ++interval) {
    t.Reset(1000u * interval);
    std::map<AccountId, std::uint64_t> want;
    // Intervals of growing size (the table grows past 256 slots mid-interval), mostly this
    // core's (tag 0) consecutive calls, each charged a few times, with calls of other cores
    // (tags 1-3) among them, as after a steal, and the runtime's classes.
    const int calls = 100 << interval;
    for (int i = 0; i < calls; ++i) {
      const unsigned tag = rng() % 10 == 0 ? 1 + static_cast<unsigned>(rng() % 3) : 0;
      const AccountId id = SequentialAccount(seq[tag]++, tag);
      for (int k = 0; k < 3; ++k) {
        const std::uint64_t c = 1 + rng() % 1000;
        t.Add(id, c);
        want[id] += c;
        t.Add(accounts::kNet, 1);
        ++want[accounts::kNet];
      }
    }
    // A call charged again after many others (a long call parked and resumed).
    const AccountId early = SequentialAccount(seq[0] - static_cast<std::uint64_t>(calls) / 2, 0);
    t.Add(early, 5);
    want[early] += 5;
    t.Close(1000u * interval + 999);
    EXPECT_EQ(Exported(t), want) << "interval " << interval << " (" << calls << " calls)";
  }
}

TEST(AccountTable, SequentialIdsOfOneTagStayDistinctAcrossTags) {
  // The same sequence number under two tags is two accounts.
  AccountTable t;
  t.Reset(0);
  t.Add(SequentialAccount(5, 0), 10);
  t.Add(SequentialAccount(5, 1), 20);
  t.Add(SequentialAccount(6, 0), 30);
  t.Close(100);
  const auto m = Exported(t);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.at(SequentialAccount(5, 0)), 10u);
  EXPECT_EQ(m.at(SequentialAccount(5, 1)), 20u);
  EXPECT_EQ(m.at(SequentialAccount(6, 0)), 30u);
}

}  // namespace
}  // namespace junction::sched
