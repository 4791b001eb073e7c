// ledger_test.cc — the SQLite ledger: round trip, 1M rows under load, overflow aggregates,
// and kill -9 of a writing process followed by loss detection on reopen.
#include "energy/ledger/ledger.h"
#include "energy/ledger/ledger_test_db.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace energy {
namespace {

class LedgerTest : public LedgerDbTest {};

// A record whose figures follow from i, so sums can be checked.
InvocationRecord MakeRecord(uint64_t i, int functions = 4) {
  InvocationRecord r;
  r.call_id.Assign("call-" + std::to_string(i));
  r.function.Assign("fn-" + std::to_string(i % functions));
  r.ns.Assign("openfaas-fn");
  r.start_ns = 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1000;
  r.end_ns = r.start_ns + 500 + static_cast<int64_t>(i % 7);
  r.cycles = 1000 + i;
  r.joules.Set(Zone::kPackage, Joules{0.001 * static_cast<double>(i % 100)});
  r.joules.Set(Zone::kDram, Joules{0.0001});
  r.joules.sources.Add(Source::kModel);
  r.grams = 1e-6 * static_cast<double>(i % 10);
  r.intensity_g_per_kwh = 250.0;
  r.intensity_kind = carbon::IntensityKind::kHeld;
  r.embodied_grams = 1e-9;
  r.status = (i % 50 == 0) ? 500 : 200;
  r.bytes_in = 10 + i % 3;
  r.bytes_out = 20;
  return r;
}

TEST_F(LedgerTest, RoundTripsRecordsAndIntervals) {
  auto ledger = Ledger::Open({.path = path_, .producers = 2});
  ASSERT_TRUE(ledger) << ledger.error().message();
  EXPECT_EQ((*ledger)->open_report().rows_lost, 0u);
  EXPECT_EQ((*ledger)->open_report().next_seq, 1u);
  for (uint64_t i = 0; i < 10; ++i) {
    auto r = (*ledger)->Push(static_cast<uint32_t>(i % 2), MakeRecord(i));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->seq, i + 1);
    EXPECT_FALSE(r->aggregated);
  }
  IntervalRecord iv;
  iv.begin_ns = 5;
  iv.end_ns = 10'000'005;
  iv.meter.Set(Zone::kPackage, Joules{0.2});
  iv.meter.sources.Add(Source::kRapl);
  iv.invocations_j = 0.15;
  iv.idle_j = 0.05;
  iv.accounts = 3;
  ASSERT_TRUE((*ledger)->PushInterval(iv));
  EXPECT_FALSE((*ledger)->Push(2, MakeRecord(0)));  // no such producer
  ASSERT_TRUE((*ledger)->Close());
  EXPECT_FALSE((*ledger)->Push(0, MakeRecord(0)));  // closed
  ledger->reset();

  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), 10);
  SqliteDb db = Db();
  EXPECT_EQ(*db.QueryText("PRAGMA journal_mode"), "wal");
  auto st = db.Prepare(
      "SELECT call_id, function, namespace, wall_ns, cycles, package_j, core_j, source, "
      "intensity_kind, status, bytes_in FROM invocations WHERE seq = 8");
  ASSERT_TRUE(st);
  ASSERT_TRUE(*st->Step());
  InvocationRecord want = MakeRecord(7);
  EXPECT_EQ(st->ColumnText(0), "call-7");
  EXPECT_EQ(st->ColumnText(1), "fn-3");
  EXPECT_EQ(st->ColumnText(2), "openfaas-fn");
  EXPECT_EQ(st->ColumnInt64(3), want.end_ns - want.start_ns);
  EXPECT_EQ(st->ColumnInt64(4), 1007);
  EXPECT_DOUBLE_EQ(st->ColumnDouble(5), 0.007);
  EXPECT_TRUE(st->ColumnIsNull(6));  // no core zone figure
  EXPECT_EQ(st->ColumnText(7), "model");
  EXPECT_EQ(st->ColumnText(8), "held");
  EXPECT_EQ(st->ColumnInt64(9), 200);
  EXPECT_EQ(st->ColumnInt64(10), 11);
  EXPECT_DOUBLE_EQ(QueryDouble("SELECT meter_total_j FROM intervals"), 0.2);
  EXPECT_DOUBLE_EQ(QueryDouble("SELECT idle_j FROM intervals"), 0.05);

  auto again = Ledger::Open({.path = path_});
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->open_report().rows, 10u);
  EXPECT_EQ((*again)->open_report().rows_lost, 0u);
  EXPECT_EQ((*again)->open_report().next_seq, 11u);
  // A second process may not open the same ledger.
  auto second = Ledger::Open({.path = path_});
  EXPECT_FALSE(second);
}

TEST_F(LedgerTest, OpeningAnOlderLedgerDropsItsFunctionIndex) {
  // Ledgers made before 2026-12-04 carry an index the writer paid for on every row and no
  // query used (ledger.cc, kSchema); opening one removes it and keeps its rows.
  {
    auto ledger = Ledger::Open({.path = path_});
    ASSERT_TRUE(ledger) << ledger.error().message();
    for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE((*ledger)->Push(0, MakeRecord(i)));
    ASSERT_TRUE((*ledger)->Close());
  }
  {
    auto db = SqliteDb::Open(path_, {});
    ASSERT_TRUE(db) << db.error().message();
    ASSERT_TRUE(db->Exec("CREATE INDEX invocations_by_function ON invocations(function, start_ns)"));
  }
  ASSERT_EQ(Query("SELECT count(*) FROM sqlite_master WHERE name = 'invocations_by_function'"), 1);
  {
    auto ledger = Ledger::Open({.path = path_});
    ASSERT_TRUE(ledger) << ledger.error().message();
    ASSERT_TRUE((*ledger)->Close());
  }
  EXPECT_EQ(Query("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'invocations'"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), 3);
}

// The writer inserts 32 rows per statement and the rest of a batch one by one: every row of
// both paths, in several batches (max_batch 70: 2 groups + 6 single rows each), is present with
// its own values — no row shifted into another's columns, none lost at a group boundary.
// An idle node pushes an interval row every 10 ms and no invocation: the writer commits them
// in a fifth of the transactions (kMaxRoundStretch flush intervals apart), and the first call
// after the quiet spell wakes it at once instead of waiting out that long sleep.
TEST_F(LedgerTest, AnIdleWriterSleepsLongAndTheNextRecordWakesIt) {
  using namespace std::chrono;
  auto ledger = Ledger::Open({.path = path_, .flush_interval = milliseconds(20)});
  ASSERT_TRUE(ledger) << ledger.error().message();
  Ledger& l = **ledger;
  auto push_intervals = [&](milliseconds span) {
    const auto start = steady_clock::now();
    for (int i = 1; steady_clock::now() - start < span; ++i) {
      IntervalRecord iv;
      iv.begin_ns = i * 10'000'000;
      iv.end_ns = iv.begin_ns + 10'000'000;
      iv.meter.Set(Zone::kPackage, Joules{0.01});
      ASSERT_TRUE(l.PushInterval(iv));
      std::this_thread::sleep_until(start + milliseconds(10 * i));
    }
  };
  push_intervals(milliseconds(100));  // the writer's first rounds, before it is idle
  const uint64_t batches0 = l.stats().batches;
  push_intervals(milliseconds(1000));
  const uint64_t idle_batches = l.stats().batches - batches0;
  // 1 s of intervals: ~10 transactions (100 ms apart); a round per flush interval would be 50.
  EXPECT_LE(idle_batches, 20u) << "the idle writer committed every flush interval";
  EXPECT_GE(idle_batches, 5u);
  // The next record is committed well before the 100 ms idle sleep would have ended (the best
  // of three tries: this machine may delay any one thread by tens of ms).
  double best_ms = 1e9;
  for (uint64_t i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(milliseconds(150));  // idle again
    const uint64_t rows0 = l.stats().rows_written;
    const auto t0 = steady_clock::now();
    ASSERT_TRUE(l.Push(0, MakeRecord(i)));
    while (l.stats().rows_written == rows0 && steady_clock::now() - t0 < seconds(5)) {
      std::this_thread::sleep_for(microseconds(200));
    }
    best_ms = std::min(best_ms, duration<double, std::milli>(steady_clock::now() - t0).count());
  }
  EXPECT_LT(best_ms, 50.0) << "a record after a quiet spell waited for the idle writer's sleep";
  ASSERT_TRUE(l.Close());
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), 3);
}

TEST_F(LedgerTest, MultiRowInsertsKeepEveryRowAndField) {
  constexpr uint64_t kRows = 3 * 70 + 45;
  auto ledger = Ledger::Open({.path = path_, .queue_capacity = 1024, .max_batch = 70});
  ASSERT_TRUE(ledger) << ledger.error().message();
  for (uint64_t i = 0; i < kRows; ++i) {
    InvocationRecord r = MakeRecord(i);
    if (i % 3 == 0) r.joules.sources.Add(Source::kRapl);  // two source texts interleaved
    if (i % 5 == 0) r.intensity_kind = carbon::IntensityKind::kMeasured;
    ASSERT_TRUE((*ledger)->Push(0, r));
  }
  ASSERT_TRUE((*ledger)->Close());
  ledger->reset();
  SqliteDb db = Db();
  auto st = db.Prepare(
      "SELECT seq, call_id, function, namespace, start_ns, end_ns, wall_ns, cycles, package_j, "
      "core_j, dram_j, total_j, source, grams, intensity_g_per_kwh, intensity_kind, "
      "embodied_grams, status, bytes_in, bytes_out FROM invocations ORDER BY seq");
  ASSERT_TRUE(st);
  uint64_t i = 0;
  for (; *st->Step(); ++i) {
    InvocationRecord w = MakeRecord(i);
    ASSERT_EQ(st->ColumnInt64(0), static_cast<int64_t>(i + 1));
    EXPECT_EQ(st->ColumnText(1), w.call_id.view());
    EXPECT_EQ(st->ColumnText(2), w.function.view());
    EXPECT_EQ(st->ColumnText(3), "openfaas-fn");
    EXPECT_EQ(st->ColumnInt64(4), w.start_ns);
    EXPECT_EQ(st->ColumnInt64(5), w.end_ns);
    EXPECT_EQ(st->ColumnInt64(6), w.end_ns - w.start_ns);
    EXPECT_EQ(st->ColumnInt64(7), static_cast<int64_t>(w.cycles));
    EXPECT_DOUBLE_EQ(st->ColumnDouble(8), w.joules[Zone::kPackage].value);
    EXPECT_TRUE(st->ColumnIsNull(9));
    EXPECT_DOUBLE_EQ(st->ColumnDouble(10), 0.0001);
    EXPECT_DOUBLE_EQ(st->ColumnDouble(11), w.joules.NodeTotal().value);
    EXPECT_EQ(st->ColumnText(12), i % 3 == 0 ? "rapl+model" : "model") << "row " << i;
    EXPECT_DOUBLE_EQ(st->ColumnDouble(13), w.grams);
    EXPECT_DOUBLE_EQ(st->ColumnDouble(14), 250.0);
    EXPECT_EQ(st->ColumnText(15), i % 5 == 0 ? "measured" : "held") << "row " << i;
    EXPECT_DOUBLE_EQ(st->ColumnDouble(16), 1e-9);
    EXPECT_EQ(st->ColumnInt64(17), w.status);
    EXPECT_EQ(st->ColumnInt64(18), static_cast<int64_t>(w.bytes_in));
    EXPECT_EQ(st->ColumnInt64(19), 20);
  }
  EXPECT_EQ(i, kRows);
}

TEST_F(LedgerTest, AMillionRowsUnderLoad) {
  constexpr uint32_t kProducers = 2;
  constexpr uint64_t kPerProducer = 500'000;
  LedgerOptions o{.path = path_,
                  .producers = kProducers,
                  .queue_capacity = 8192,
                  .max_batch = 8192,
                  .flush_interval = std::chrono::milliseconds(5)};
  // The burst is packed; Close must expand all of it, however slow a sanitizer build or a
  // loaded machine makes that (the default budget bounds a node's shutdown instead).
  o.close_expand_budget = std::chrono::minutes(10);
  auto ledger = Ledger::Open(o);
  ASSERT_TRUE(ledger) << ledger.error().message();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  std::atomic<uint64_t> failures{0};
  for (uint32_t p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (uint64_t k = 0; k < kPerProducer; ++k) {
        // Back off when the queue is three-quarters full, as a well-provisioned node would
        // never reach overflow; the overflow path has its own test.
        while ((*ledger)->ApproxQueued(p) > 6144) std::this_thread::yield();
        auto r = (*ledger)->Push(p, MakeRecord(p * kPerProducer + k));
        if (!r || r->aggregated) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE((*ledger)->Close());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  LedgerStats s = (*ledger)->stats();
  std::printf("1M rows: %.2f s, %.0f rows/s, %lu batches\n", secs, 1e6 / secs, s.batches);
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ(s.rows_written, kProducers * kPerProducer);
  EXPECT_EQ(s.overflowed, 0u);
  ledger->reset();
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), 1'000'000);
  EXPECT_EQ(Query("SELECT count(DISTINCT call_id) FROM invocations"), 1'000'000);
  EXPECT_EQ(Query("SELECT min(seq) FROM invocations"), 1);
  EXPECT_EQ(Query("SELECT max(seq) FROM invocations"), 1'000'000);
  double want = 0;
  for (uint64_t i = 0; i < kProducers * kPerProducer; ++i) {
    want += MakeRecord(i).joules.NodeTotal().value;
  }
  EXPECT_NEAR(QueryDouble("SELECT sum(total_j) FROM invocations"), want, 1e-6 * want);
  auto again = Ledger::Open({.path = path_});
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->open_report().rows_lost, 0u);
}

TEST_F(LedgerTest, PushManyBuildsInPlaceNumbersInOrderAndFoldsWhatFindsNoRoom) {
  // A ring of 64 and a writer that waits: the first PushMany of 50 fits, the second of 50 has
  // room for 14 and folds the other 36; every record is a row or in an aggregate, with the
  // sequence numbers handed out in order.
  auto ledger = Ledger::Open({.path = path_, .queue_capacity = 64, .flush_interval = std::chrono::seconds(10),
                              .pack_at = 0});
  ASSERT_TRUE(ledger);
  const uint64_t first_seq = (*ledger)->open_report().next_seq;
  std::vector<int> filled(100, 0);
  auto fill_from = [&](uint64_t offset) {
    return [&, offset](std::span<InvocationRecord> out, size_t first) {
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = MakeRecord(offset + first + i);
        out[i].seq = 12345;  // overwritten by the ledger
        ++filled[offset + first + i];
      }
    };
  };
  auto a = (*ledger)->PushMany(0, 50, fill_from(0));
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(*a, 0u);
  auto b = (*ledger)->PushMany(0, 50, fill_from(50));
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(*b, 36u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(filled[static_cast<size_t>(i)], 1) << "record " << i;
  auto bad = (*ledger)->PushMany(7, 1, fill_from(0));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), junction::ErrorCode::kInvalidArgument);
  ASSERT_TRUE((*ledger)->Close());
  EXPECT_EQ((*ledger)->stats().overflowed, 36u);
  ledger->reset();
  EXPECT_EQ(Query("SELECT count(*) FROM invocations"), 64);
  EXPECT_EQ(Query("SELECT coalesce(sum(records), 0) FROM overflow_aggregates"), 36);
  EXPECT_EQ(Query("SELECT min(seq) FROM invocations"), static_cast<int64_t>(first_seq));
  EXPECT_EQ(Query("SELECT max(seq) FROM invocations"), static_cast<int64_t>(first_seq + 63));
  // Row k holds record k (its call id) under seq first_seq + k.
  EXPECT_EQ(Query("SELECT count(*) FROM invocations WHERE call_id = 'call-' || (seq - " +
                  std::to_string(first_seq) + ")"),
            64);
  EXPECT_EQ(Query("SELECT min(min_seq) FROM overflow_aggregates"), static_cast<int64_t>(first_seq + 64));
  EXPECT_EQ(Query("SELECT max(max_seq) FROM overflow_aggregates"), static_cast<int64_t>(first_seq + 99));
  auto again = Ledger::Open({.path = path_});
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->open_report().rows_lost, 0u);
}

TEST_F(LedgerTest, FullQueuesAggregatePerFunctionAndNeverDrop) {
  constexpr uint32_t kProducers = 2;
  constexpr uint64_t kPerProducer = 100'000;
  auto ledger = Ledger::Open({.path = path_,
                              .producers = kProducers,
                              .queue_capacity = 256,
                              .max_batch = 256,
                              .flush_interval = std::chrono::milliseconds(50)});
  ASSERT_TRUE(ledger);
  std::vector<std::thread> threads;
  std::atomic<uint64_t> aggregated{0};
  for (uint32_t p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (uint64_t k = 0; k < kPerProducer; ++k) {
        auto r = (*ledger)->Push(p, MakeRecord(p * kPerProducer + k, 40));  // 40 > 32 slots
        if (r && r->aggregated) aggregated.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE((*ledger)->Close());
  LedgerStats s = (*ledger)->stats();
  ledger->reset();
  EXPECT_GT(aggregated.load(), 0u) << "the burst never filled a queue; the test proves nothing";
  EXPECT_EQ(s.overflowed, aggregated.load());
  int64_t rows = Query("SELECT count(*) FROM invocations");
  int64_t folded = Query("SELECT coalesce(sum(records), 0) FROM overflow_aggregates");
  EXPECT_EQ(static_cast<uint64_t>(folded), aggregated.load());
  EXPECT_EQ(static_cast<uint64_t>(rows + folded), kProducers * kPerProducer);
  double want = 0;
  for (uint64_t i = 0; i < kProducers * kPerProducer; ++i) {
    want += MakeRecord(i, 40).joules.NodeTotal().value;
  }
  double got = QueryDouble(
      "SELECT (SELECT coalesce(sum(total_j),0) FROM invocations) + "
      "(SELECT coalesce(sum(total_j),0) FROM overflow_aggregates)");
  EXPECT_NEAR(got, want, 1e-6 * want);
  EXPECT_GT(Query("SELECT count(*) FROM overflow_aggregates WHERE function = '*'"), 0);
  auto again = Ledger::Open({.path = path_});
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->open_report().rows_lost, 0u);
  EXPECT_EQ((*again)->open_report().aggregated, aggregated.load());
}

TEST_F(LedgerTest, KillDashNineLosesOnlyUncommittedRowsAndSaysHowMany) {
  constexpr uint64_t kCommitted = 1000, kInFlight = 300;
  int ready = -1;
  pid_t pid = ForkChild(&ready, [&](int fd) {
    // The writer only runs on Flush(): what is pushed after it stays in the queue.
    auto l = Ledger::Open({.path = path_, .flush_interval = std::chrono::hours(1)});
    if (!l) _exit(1);
    for (uint64_t i = 0; i < kCommitted; ++i) (void)(*l)->Push(0, MakeRecord(i));
    if (!(*l)->Flush()) _exit(2);
    for (uint64_t i = kCommitted; i < kCommitted + kInFlight; ++i) {
      (void)(*l)->Push(0, MakeRecord(i));
    }
    (void)!write(fd, "r", 1);
    pause();
  });
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitReady(ready));
  ASSERT_TRUE(KillDashNine(pid));

  auto l = Ledger::Open({.path = path_});
  ASSERT_TRUE(l) << l.error().message();
  EXPECT_EQ((*l)->open_report().rows, kCommitted);
  EXPECT_EQ((*l)->open_report().rows_lost, kInFlight);
  EXPECT_EQ((*l)->open_report().next_seq, kCommitted + kInFlight + 1);
  ASSERT_TRUE((*l)->Close());
  l->reset();
  EXPECT_EQ(Query("SELECT sum(rows_lost) FROM crash_reports"), static_cast<int64_t>(kInFlight));
  EXPECT_EQ(Query("SELECT max(seq) FROM invocations"), static_cast<int64_t>(kCommitted));
  // Reported once: a clean reopen finds no new loss.
  auto again = Ledger::Open({.path = path_});
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->open_report().rows_lost, 0u);
  EXPECT_EQ((*again)->open_report().rows_lost_total, kInFlight);
}

TEST_F(LedgerTest, KillDashNineUnderLoadAtRandomMoments) {
  constexpr uint32_t kProducers = 2;
  constexpr size_t kQueue = 1024, kBatch = 2048;
  // Pushes acknowledged by the child, counted in memory the parent can read after the kill.
  auto* pushed = static_cast<std::atomic<uint64_t>*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pushed, MAP_FAILED);
  std::mt19937 rng(
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  uint64_t issued_before = 0, present_before = 0;
  for (int round = 0; round < 4; ++round) {
    new (pushed) std::atomic<uint64_t>(0);
    int ready = -1;
    pid_t pid = ForkChild(&ready, [&](int fd) {
      auto l = Ledger::Open({.path = path_,
                             .producers = kProducers,
                             .queue_capacity = kQueue,
                             .max_batch = kBatch,
                             .flush_interval = std::chrono::milliseconds(5)});
      if (!l) _exit(1);
      std::vector<std::thread> threads;
      for (uint32_t p = 0; p < kProducers; ++p) {
        threads.emplace_back([&, p] {
          for (uint64_t k = 0;; ++k) {
            while ((*l)->ApproxQueued(p) > kQueue - 64) std::this_thread::yield();
            if ((*l)->Push(p, MakeRecord(k * kProducers + p))) pushed->fetch_add(1);
          }
        });
      }
      while (pushed->load() < 20'000) std::this_thread::yield();
      (void)!write(fd, "r", 1);
      for (auto& t : threads) t.join();
    });
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(WaitReady(ready));
    int delay_us = static_cast<int>(rng() % 30'000);
    usleep(delay_us);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited " << WEXITSTATUS(status);
    const uint64_t acked = pushed->load();

    auto l = Ledger::Open({.path = path_});
    ASSERT_TRUE(l) << l.error().message();
    const OpenReport r = (*l)->open_report();
    const uint64_t issued = r.next_seq - 1;
    // Packs (the writer was behind) count as written: Close() below expands them.
    const uint64_t present = r.rows + r.aggregated + r.packed;
    const uint64_t issued_now = issued - issued_before;
    const uint64_t present_now = present - present_before;
    std::printf(
        "round %d: killed %d us after ready; %lu acknowledged, %lu written (%lu of all in packs), "
        "%lu reported lost\n",
        round, delay_us, acked, present_now, r.packed, r.rows_lost);
    EXPECT_EQ(r.aggregated, 0u);  // paced producers never overflow
    // The child's own count agrees with the sequence file (a producer may have taken a number
    // without acknowledging it when the signal hit).
    EXPECT_LE(acked, issued_now);
    EXPECT_LE(issued_now, acked + kProducers);
    // Every number handed out is in the ledger or reported lost, and losses are reported once.
    EXPECT_EQ(present + r.rows_lost_total, issued);
    EXPECT_EQ(r.rows_lost, issued_now - present_now);
    // At most the batch in flight and what sat in the queues (the next batch) is missing.
    EXPECT_LE(r.rows_lost, kBatch + kProducers * kQueue);
    ASSERT_TRUE((*l)->Close());
    l->reset();
    EXPECT_EQ(Query("SELECT count(*) FROM invocations"),
              Query("SELECT count(DISTINCT seq) FROM invocations"));
    EXPECT_EQ(static_cast<uint64_t>(Query("SELECT count(*) FROM invocations")), present)
        << "Close() expands every pack, exactly once";
    EXPECT_EQ(Query("SELECT count(*) FROM invocation_packs"), 0);
    EXPECT_LE(Query("SELECT max(seq) FROM invocations"), static_cast<int64_t>(issued));
    SqliteDb db = Db();
    EXPECT_EQ(*db.QueryText("PRAGMA integrity_check"), "ok");
    issued_before = issued;
    present_before = present;
  }
  munmap(pushed, 4096);
}

}  // namespace
}  // namespace energy
