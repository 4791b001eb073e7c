// cycle_accounts.cc — the open-addressing account table behind per-core cycle accounting.
#include "junction/sched/cycle_accounts.h"

namespace junction::sched {
AccountTable::AccountTable() : slots_(256, Slot{0, 0}) { used_.reserve(256); }

void AccountTable::Reset(std::uint64_t tsc_begin) {
  tsc_begin_ = tsc_begin;
  tsc_end_ = tsc_begin;
  for (auto& c : classes_) c = 0;
  for (std::uint32_t i : used_) slots_[i] = Slot{0, 0};
  used_.clear();
}

void AccountTable::AddUser(AccountId account, std::uint64_t cycles) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = Hash(account) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.key == account) {
      s.cycles += cycles;
      return;
    }
    if (s.key == 0) {
      s.key = account;
      s.cycles = cycles;
      used_.push_back(static_cast<std::uint32_t>(i));
      if (used_.size() * 4 >= slots_.size() * 3) Grow();
      return;
    }
  }
}

void AccountTable::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{0, 0});
  used_.clear();
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.key == 0) continue;
    std::size_t i = Hash(s.key) & mask;
    while (slots_[i].key != 0) i = (i + 1) & mask;
    slots_[i] = s;
    used_.push_back(static_cast<std::uint32_t>(i));
  }
}

void AccountTable::ExportTo(CoreInterval* out) const {
  out->tsc_begin = tsc_begin_;
  out->tsc_end = tsc_end_;
  out->idle = classes_[accounts::kIdle];
  out->runtime = classes_[accounts::kRuntime];
  out->poll = classes_[accounts::kPoll];
  out->busy.clear();
  for (AccountId a = 0; a < accounts::kFirstUser; ++a) {
    if (a == accounts::kIdle || a == accounts::kRuntime || a == accounts::kPoll) continue;
    if (classes_[a] != 0) out->busy.push_back({a, classes_[a]});
  }
  for (std::uint32_t i : used_) out->busy.push_back({slots_[i].key, slots_[i].cycles});
}

}  // namespace junction::sched
