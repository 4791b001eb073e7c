// pack_test.cc — invocation packs: the body format round trip, damaged bodies, and the ledger
// packing a burst, keeping it through kill -9 and expanding it into the very rows it would have
// written directly.
#include "energy/ledger/pack.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "energy/ledger/ledger.h"
#include "energy/ledger/ledger_test_db.h"

namespace energy {
namespace {

InvocationRecord Record(uint64_t i) {
  InvocationRecord r;
  // Call ids as they come: none, the node's own lowercase UUIDs (stored as 16 bytes), a
  // client's uppercase UUID and a client's free text (stored as text).
  char uuid[40];
  std::snprintf(uuid, sizeof(uuid), "%08llx-1234-4abc-8def-%012llx", static_cast<unsigned long long>(i * 2654435761u),
                static_cast<unsigned long long>(i * 11400714819323198485ull >> 16));
  std::string id = i % 5 == 0 ? std::string() : i % 5 == 1 ? std::string(uuid) : "call-" + std::to_string(i);
  if (i % 5 == 2) {
    id = uuid;
    for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  r.call_id.Assign(id);
  r.function.Assign("fn-" + std::to_string(i % 3));
  r.ns.Assign("openfaas-fn");
  r.start_ns = 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1000;
  r.end_ns = r.start_ns + 700 + static_cast<int64_t>(i % 11);
  r.cycles = 5000 + i;
  r.joules.Set(Zone::kPackage, Joules{0.001 * static_cast<double>(i % 97)});
  if (i % 2 == 0) r.joules.Set(Zone::kDram, Joules{1e-4 * static_cast<double>(i % 13)});
  r.joules.sources.Add(Source::kModel);
  r.grams = 1e-6 * static_cast<double>(i % 10);
  r.intensity_g_per_kwh = 200.0 + static_cast<double>(i / 7 % 50);  // runs of equal values
  r.intensity_kind = i % 3 == 0 ? carbon::IntensityKind::kMeasured : carbon::IntensityKind::kInterpolated;
  r.embodied_grams = 1e-9 * static_cast<double>(i);
  r.status = i % 40 == 0 ? 500 : 200;
  r.bytes_in = 10 + i % 3;
  r.bytes_out = 1u << 20;
  return r;
}

void ExpectSameRecord(const InvocationRecord& got, const InvocationRecord& want) {
  EXPECT_EQ(got.call_id.view(), want.call_id.view());
  EXPECT_EQ(got.function.view(), want.function.view());
  EXPECT_EQ(got.ns.view(), want.ns.view());
  EXPECT_EQ(got.start_ns, want.start_ns);
  EXPECT_EQ(got.end_ns, want.end_ns);
  EXPECT_EQ(got.cycles, want.cycles);
  EXPECT_EQ(got.joules.present, want.joules.present);
  for (Zone z : kAllZones) EXPECT_EQ(got.joules[z].value, want.joules[z].value);
  EXPECT_EQ(got.joules.sources, want.joules.sources);
  EXPECT_EQ(got.grams, want.grams);
  EXPECT_EQ(got.intensity_g_per_kwh, want.intensity_g_per_kwh);
  EXPECT_EQ(got.intensity_kind, want.intensity_kind);
  EXPECT_EQ(got.embodied_grams, want.embodied_grams);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.bytes_in, want.bytes_in);
  EXPECT_EQ(got.bytes_out, want.bytes_out);
}

TEST(PackTest, BodyRoundTripsEveryFieldAndTotalsMatch) {
  PackBuilder b;
  std::vector<InvocationRecord> in;
  for (uint64_t i = 0; i < 30; ++i) {
    InvocationRecord r = Record(i * 3);  // all of function fn-0
    if (i % 2 == 1) r.intensity_kind = carbon::IntensityKind::kHeld;
    if (i == 7) {
      r.call_id.Assign(std::string(64, 'x'));  // the longest call id a record holds
      r.joules.Set(Zone::kGpu, Joules{2.5});
      r.joules.Set(Zone::kPsys, Joules{3.5});
    }
    in.push_back(r);
  }
  // Sequence numbers rise within a producer but not across them: the deltas go both ways.
  auto seq = [](size_t i) -> uint64_t { return i < 15 ? 100 + i : 60 + i; };
  b.Reset(in[0]);
  double total = 0, grams = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_TRUE(b.Matches(in[i]));
    b.Append(seq(i), in[i]);
    total += in[i].joules.NodeTotal().value;
    grams += in[i].grams;
  }
  EXPECT_FALSE(b.Matches(Record(1))) << "another function";
  InvocationRecord next_hour = in[0];
  next_hour.end_ns += 3'600'000'000'000;
  EXPECT_FALSE(b.Matches(next_hour)) << "another hour";
  EXPECT_EQ(b.records(), 30u);
  EXPECT_EQ(b.min_seq(), 75u);
  EXPECT_EQ(b.max_seq(), 114u);
  EXPECT_EQ(b.first_start_ns(), in.front().start_ns);
  EXPECT_EQ(b.last_end_ns(), in.back().end_ns);
  EXPECT_DOUBLE_EQ(b.total_j(), total);
  EXPECT_DOUBLE_EQ(b.grams(), grams);
  EXPECT_EQ(b.IntensityKinds(), "measured,held");
  EXPECT_LT(b.body().size(), 30 * 100u) << "a record packs into well under its in-memory size";

  size_t n = 0;
  auto seq_of = seq;
  auto ok = ForEachPacked(b.body(), kPackFormat, b.function(), b.ns(), b.sources(),
                          [&](uint64_t seq, const InvocationRecord& r) {
                            EXPECT_EQ(seq, seq_of(n));
                            ExpectSameRecord(r, in[n]);
                            ++n;
                          });
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(n, in.size());
}

TEST(PackTest, DamagedBodiesAndUnknownFormatsAreErrorsNotRecords) {
  PackBuilder b;
  b.Reset(Record(0));
  b.Append(1, Record(0));
  b.Append(2, Record(3));
  const std::string body(b.body());
  auto count = [](std::string_view body, int format) {
    size_t n = 0;
    auto ok = ForEachPacked(body, format, "fn-0", "openfaas-fn", SourceSet(Source::kModel),
                            [&](uint64_t, const InvocationRecord&) { ++n; });
    return std::make_pair(ok, n);
  };
  for (size_t cut : {size_t{1}, size_t{9}, body.size() / 2, body.size() - 1}) {
    auto [ok, n] = count(std::string_view(body).substr(0, cut), kPackFormat);
    ASSERT_FALSE(ok) << "a body cut at " << cut << " bytes decoded";
    EXPECT_EQ(ok.error().code(), junction::ErrorCode::kIo);
    EXPECT_NE(ok.error().message().find("truncated or malformed"), std::string::npos);
  }
  auto [future, n] = count(body, kPackFormat + 1);
  ASSERT_FALSE(future);
  EXPECT_EQ(future.error().code(), junction::ErrorCode::kUnavailable);
  EXPECT_EQ(n, 0u);
  // A record whose four leading varints take one byte each: the zone mask is byte 4, the
  // flags byte 5.
  InvocationRecord small = Record(0);
  small.start_ns = small.end_ns = 0;
  small.cycles = 0;
  PackBuilder one;
  one.Reset(small);
  one.Append(0, small);
  ASSERT_TRUE(count(one.body(), kPackFormat).first);
  std::string bad = std::string(one.body());
  bad[4] = static_cast<char>(0x40);  // a zone that does not exist
  EXPECT_FALSE(count(bad, kPackFormat).first);
  bad = std::string(one.body());
  bad[5] = static_cast<char>(bad[5] | 0x20);  // a flag that does not exist
  EXPECT_FALSE(count(bad, kPackFormat).first);
}

class LedgerPackTest : public LedgerDbTest {
 protected:
  // Waits until the writer has packed `n` records; false after 20 s.
  static bool WaitPacked(Ledger& l, uint64_t n) {
    for (int i = 0; i < 2000 && l.stats().records_packed < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return l.stats().records_packed >= n;
  }
  LedgerOptions Options() const {
    // Every round of 64 or more records is packed; packs stay until Flush()/Close().
    return {.path = path_, .pack_at = 64, .expand_delay = std::chrono::hours(1)};
  }
};

TEST_F(LedgerPackTest, ABurstIsPackedThenFlushExpandsItIntoTheRowsItWouldHaveWritten) {
  constexpr uint64_t kN = 5000;
  auto l = Ledger::Open(Options());
  ASSERT_TRUE(l) << l.error().message();
  double want_j = 0;
  for (uint64_t i = 0; i < kN; ++i) {
    ASSERT_TRUE((*l)->Push(0, Record(i)));
    want_j += Record(i).joules.NodeTotal().value;
  }
  ASSERT_TRUE(WaitPacked(**l, kN)) << "the burst was not packed: " << (*l)->stats().rows_written << " rows";
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), 0);
  EXPECT_EQ(Query("SELECT sum(records) FROM invocation_packs"), static_cast<int64_t>(kN));
  EXPECT_EQ(Query("SELECT count(DISTINCT function) FROM invocation_packs"), 3);
  EXPECT_EQ(Query("SELECT min(min_seq) FROM invocation_packs"), 1);
  EXPECT_EQ(Query("SELECT max(max_seq) FROM invocation_packs"), static_cast<int64_t>(kN));
  EXPECT_NEAR(QueryDouble("SELECT sum(total_j) FROM invocation_packs"), want_j, 1e-9 * want_j);
  EXPECT_GT((*l)->stats().packs_pending, 0u);

  ASSERT_TRUE((*l)->Flush());
  EXPECT_EQ((*l)->stats().packs_pending, 0u);
  EXPECT_EQ((*l)->stats().records_expanded, kN);
  EXPECT_EQ(Query("SELECT count(*) FROM invocation_packs"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), static_cast<int64_t>(kN));
  EXPECT_EQ(Query("SELECT count(DISTINCT seq) FROM invocations"), static_cast<int64_t>(kN));
  EXPECT_NEAR(QueryDouble("SELECT sum(total_j) FROM invocations"), want_j, 1e-9 * want_j);
  ASSERT_TRUE((*l)->Close());

  // Each row holds what a direct write of the same record holds (a second ledger, no packs).
  const std::string direct = dir_ + "/direct.db";
  auto d = Ledger::Open({.path = direct, .pack_at = 0});
  ASSERT_TRUE(d);
  for (uint64_t i = 0; i < kN; ++i) ASSERT_TRUE((*d)->Push(0, Record(i)));
  ASSERT_TRUE((*d)->Close());
  EXPECT_EQ((*d)->stats().records_packed, 0u);
  auto db = SqliteDb::Open(path_, {.read_only = true});
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Exec("ATTACH DATABASE '" + direct + "' AS direct"));
  const std::string columns =
      "seq, call_id, function, namespace, start_ns, end_ns, wall_ns, cycles, package_j, core_j, uncore_j, "
      "dram_j, psys_j, gpu_j, total_j, source, grams, intensity_g_per_kwh, intensity_kind, embodied_grams, "
      "status, bytes_in, bytes_out";
  auto differ = db->QueryInt64("SELECT count(*) FROM (SELECT " + columns + " FROM main.invocations EXCEPT SELECT " +
                               columns + " FROM direct.invocations)");
  ASSERT_TRUE(differ) << differ.error().message();
  EXPECT_EQ(*differ, 0) << "expanded rows differ from directly written ones";
}

TEST_F(LedgerPackTest, PacksSurviveKillDashNineAndAreCountedNotLost) {
  constexpr uint64_t kN = 3000;
  int ready = -1;
  pid_t pid = ForkChild(&ready, [&](int fd) {
    auto l = Ledger::Open(Options());
    if (!l) _exit(1);
    for (uint64_t i = 0; i < kN; ++i) (void)(*l)->Push(0, Record(i));
    if (!WaitPacked(**l, kN)) _exit(2);
    (void)!write(fd, "r", 1);
    pause();
  });
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitReady(ready)) << "the child did not pack its burst";
  ASSERT_TRUE(KillDashNine(pid));

  auto l = Ledger::Open({.path = path_});
  ASSERT_TRUE(l) << l.error().message();
  EXPECT_EQ((*l)->open_report().packed, kN);
  EXPECT_EQ((*l)->open_report().rows, 0u);
  EXPECT_EQ((*l)->open_report().rows_lost, 0u);
  EXPECT_EQ((*l)->open_report().next_seq, kN + 1);
  ASSERT_TRUE((*l)->Close());
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), static_cast<int64_t>(kN));
  EXPECT_EQ(Query("SELECT count(*) FROM invocation_packs"), 0);
}

TEST_F(LedgerPackTest, APackOfAnUnknownFormatStaysAndFlushSaysWhy) {
  {
    auto l = Ledger::Open(Options());
    ASSERT_TRUE(l);
    for (uint64_t i = 0; i < 200; ++i) ASSERT_TRUE((*l)->Push(0, Record(i)));
    ASSERT_TRUE(WaitPacked(**l, 200));
    // Closing would expand the packs: leave them as a crash would (the process keeps running).
    auto db = SqliteDb::Open(path_, {});
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->Exec("UPDATE invocation_packs SET format = 99 WHERE id = (SELECT min(id) FROM invocation_packs)"));
    auto f = (*l)->Flush();
    ASSERT_FALSE(f);
    EXPECT_NE(f.error().message().find("format 99"), std::string::npos) << f.error().message();
    EXPECT_NE(f.error().message().find("stay committed"), std::string::npos) << f.error().message();
    auto c = (*l)->Close();
    ASSERT_FALSE(c) << "Close says the pack it could not expand";
    EXPECT_NE(c.error().message().find("packs not expanded"), std::string::npos) << c.error().message();
    EXPECT_EQ(c.error().message().find("unwritten records"), std::string::npos) << "nothing was left unwritten";
    EXPECT_EQ((*l)->stats().packs_pending, 1u) << "only the undecodable pack is left";
  }
  EXPECT_EQ(Query("SELECT count(*) FROM invocation_packs"), 1);
  EXPECT_EQ(Query("SELECT count(*) FROM invocation_packs WHERE format = 99"), 1);
  EXPECT_GT(Query("SELECT count(*) FROM invocations"), 0) << "the packs behind the damaged one were expanded";
  EXPECT_EQ(Query("SELECT count(*) FROM invocations") + Query("SELECT sum(records) FROM invocation_packs"), 200);
}

TEST(LedgerRoundWaitTest, PackingStretchesRoundsToABatchWithinBounds) {
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  const LedgerOptions o{.path = "x", .queue_capacity = 16384, .max_batch = 8192,
                        .flush_interval = milliseconds(20), .pack_at = 256};
  // 1 400 records in 20 ms (70k/s): a batch of 8 192 takes 117 ms; capped at 5 intervals.
  EXPECT_EQ(Ledger::RoundWait(o, 1400, milliseconds(20)), milliseconds(100));
  // 7 000 in 20 ms (350k/s): 23.4 ms.
  EXPECT_NEAR(static_cast<double>(Ledger::RoundWait(o, 7000, milliseconds(20)).count()), 23.405e6, 0.01e6);
  // 30 000 in 20 ms: never below the flush interval.
  EXPECT_EQ(Ledger::RoundWait(o, 30000, milliseconds(20)), milliseconds(20));
  // Not packing: the flush interval.
  EXPECT_EQ(Ledger::RoundWait(o, 255, milliseconds(20)), milliseconds(20));
  EXPECT_EQ(Ledger::RoundWait(o, 1400, nanoseconds(0)), milliseconds(20));
  LedgerOptions rows = o;
  rows.pack_at = 0;
  EXPECT_EQ(Ledger::RoundWait(rows, 1400, milliseconds(20)), milliseconds(20));
  // A small ring bounds the batch: half of 2 048 at 70k/s is 14.6 ms, so the interval.
  LedgerOptions small = o;
  small.queue_capacity = 2048;
  EXPECT_EQ(Ledger::RoundWait(small, 1400, milliseconds(20)), milliseconds(20));
  small.queue_capacity = 8192;  // 4 096 at 70k/s: 58.5 ms
  EXPECT_NEAR(static_cast<double>(Ledger::RoundWait(small, 1400, milliseconds(20)).count()), 58.514e6, 0.01e6);
}

// The writer under a steady stream while it packs: every record arrives, in far fewer
// transactions than one per flush interval.
TEST_F(LedgerPackTest, AStreamIsPackedInStretchedRoundsAndLosesNothing) {
  auto l = Ledger::Open({.path = path_,
                         .flush_interval = std::chrono::milliseconds(10),
                         .pack_at = 32,
                         .expand_delay = std::chrono::hours(1)});
  ASSERT_TRUE(l) << l.error().message();
  // ~20 000 records a second for 1 s: 200 per 10 ms.
  const auto start = std::chrono::steady_clock::now();
  uint64_t pushed = 0;
  for (int ms = 1; ms <= 1000; ++ms) {
    for (int k = 0; k < 20; ++k) ASSERT_TRUE((*l)->Push(0, Record(pushed++)));
    std::this_thread::sleep_until(start + std::chrono::milliseconds(ms));
  }
  const uint64_t batches = (*l)->stats().batches;
  ASSERT_TRUE((*l)->Close());
  const LedgerStats s = (*l)->stats();
  std::printf("writer transactions in 1 s at 20k records/s while packing: %lu\n",
              static_cast<unsigned long>(batches));
  // Unstretched, a round every 10 ms: ~100. Stretched to 50 ms: ~20 (more only if the first
  // rounds start before the stream does).
  EXPECT_LE(batches, 40u);
  EXPECT_EQ(s.overflowed, 0u);
  EXPECT_GE(s.records_packed * 10, pushed * 9) << "a round or two may come before the stream fills one";
  EXPECT_EQ(s.rows_written, pushed) << "every record is a row after Close";
}

// Close() expands for a bounded time: with no budget the packs stay, committed and counted, and
// the next open's ledger expands them.
TEST_F(LedgerPackTest, CloseLeavesPacksPastItsBudgetAndTheNextOpenExpandsThem) {
  constexpr uint64_t kN = 2000;
  {
    LedgerOptions o = Options();
    o.close_expand_budget = std::chrono::milliseconds(0);
    auto l = Ledger::Open(o);
    ASSERT_TRUE(l);
    for (uint64_t i = 0; i < kN; ++i) ASSERT_TRUE((*l)->Push(0, Record(i)));
    ASSERT_TRUE(WaitPacked(**l, kN));
    ASSERT_TRUE((*l)->Close());
    EXPECT_GT((*l)->stats().packs_pending, 0u);
  }
  EXPECT_EQ(Query("SELECT sum(records) FROM invocation_packs"), static_cast<int64_t>(kN));
  auto l = Ledger::Open({.path = path_});
  ASSERT_TRUE(l);
  EXPECT_EQ((*l)->open_report().packed, kN);
  EXPECT_EQ((*l)->open_report().rows_lost, 0u);
  // Light rounds expand them without a Flush.
  for (int i = 0; i < 2000 && (*l)->stats().packs_pending > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ((*l)->stats().packs_pending, 0u);
  EXPECT_EQ((*l)->stats().records_expanded, kN);
  ASSERT_TRUE((*l)->Close());
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), static_cast<int64_t>(kN));
}

}  // namespace
}  // namespace energy

// FixedString's word-at-a-time equality: every length up to the capacity, a difference at every
// position, and stale bytes past the size (a ring slot's older, longer value) ignored.
TEST(FixedStringTest, EqualityComparesTheStoredBytesOnly) {
  const std::string base(64, 'a');
  for (size_t len = 0; len <= 64; ++len) {
    energy::FixedString<64> stale;
    stale.Assign(std::string(64, 'z'));
    stale.Assign(base.substr(0, len));  // bytes len.. still hold 'z'
    energy::FixedString<64> fresh;
    fresh.Assign(base.substr(0, len));
    EXPECT_TRUE(stale == fresh) << len;
    for (size_t at = 0; at < len; ++at) {
      std::string other = base.substr(0, len);
      other[at] = 'b';
      energy::FixedString<64> diff;
      diff.Assign(other);
      EXPECT_FALSE(stale == diff) << len << " " << at;
    }
    if (len > 0) {
      energy::FixedString<64> shorter;
      shorter.Assign(base.substr(0, len - 1));
      EXPECT_FALSE(fresh == shorter) << len;
    }
  }
}
