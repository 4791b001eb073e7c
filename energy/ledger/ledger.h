// ledger.h — the SQLite energy ledger: one row per invocation, one per sampling interval,
// written by one ledger thread in batched transactions (WAL mode). The data path only pushes
// fixed-size records into per-producer (per-core) lock-free SPSC queues.
//
//   LedgerOptions o{.path = "/var/lib/faasnode/ledger.db", .producers = num_cores};
//   auto ledger = energy::Ledger::Open(o);       // starts the writer thread
//   if ((*ledger)->open_report().rows_lost > 0) spdlog::warn(...);
//   (*ledger)->Push(core, record);               // on core `core`, never blocks for long
//   (*ledger)->Close();                          // drains everything, joins
//
// Loss accounting. Push() takes the next sequence number from a counter kept in a small
// memory-mapped file beside the database (<path>-seq), so the count of numbers handed out
// survives a crash of the process (not of the machine). Open() compares it with the rows
// present: sequence numbers issued but found in no row (and in no overflow aggregate) were
// lost in a crash — at most the batch in flight plus what sat in the queues (the next batch:
// max_batch + producers × queue_capacity) — and it reports how many; each loss is reported
// once and recorded in the crash_reports table. Records pushed concurrently with Close() may
// miss the final drain; they are then reported lost at the next open, never silently.
//
// Packs. Each drain round of the writer that finds at least `pack_at` records queued (the
// writer is behind: the node is busy) encodes them straight from the rings into packs
// (pack.h): one invocation_packs row per function, namespace, source set and hour, with the
// totals the reports read and a compact body of the records: 0.13-0.27 µs of writer CPU per
// record instead of ~0.9 µs for an invocations row (energy_ledger_bench BM_LedgerWritePacks /
// BM_LedgerWriteRows, docs/benchmarks/energy.md).
// Rounds that take fewer (the node has slack; from expand_delay after the last round that made
// packs), Flush() and Close() expand packs into their invocations rows, each pack in one
// transaction with its deletion: a record is in a pack or in a row, never both, never neither.
// Reports add the packs' totals as they add the overflow aggregates; loss detection counts
// their records. After Flush() every record is an invocations row, and after Close() too unless
// expanding them all would take longer than close_expand_budget (stats().packs_pending says
// what is left). A pack this node cannot decode (damaged, or a newer format) stays in place,
// counted by the reports, and Flush()/Close() return why; the packs behind it are expanded. The
// expansion costs what the rows would have: packing moves the row's price out of busy periods.
//
// Idle. After a round that took no invocation record the writer sleeps kMaxRoundStretch flush
// intervals (an idle node's interval rows are committed 10 times a second, not 50); the next
// Push wakes it (taking the writer's mutex for a moment, once per quiet spell).
//
// Full queues. When a producer's queue is full, the record is folded into a per-producer
// overflow aggregate for its function (a row in overflow_aggregates with the count and sums);
// it is never silently dropped, and stats().overflowed counts it.
//
// Thread affinity: Push(p, ...) from one thread per producer index p at a time; PushInterval
// from one thread (the energy thread); the rest from any thread. Only Flush() and Close()
// block.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "energy/ledger/pack.h"
#include "energy/ledger/record.h"
#include "energy/ledger/spsc_queue.h"
#include "energy/ledger/sqlite.h"
#include "junction/base/error.h"

namespace energy {

struct LedgerOptions {
  std::string path;               // the database; <path>-seq holds the sequence counter
  uint32_t producers = 1;         // queues, one per core that pushes
  size_t queue_capacity = 16384;  // records per producer queue (rounded up to a power of two)
  size_t max_batch = 8192;        // rows per transaction
  // How often the writer drains the queues (while it packs, up to 5x as long: see "Packs").
  std::chrono::milliseconds flush_interval{20};
  // A drain round taking at least this many records writes them as packs (see "Packs"); 0:
  // never (every record straight to an invocations row).
  size_t pack_at = 256;
  // Packs wait for this long after the last round that made packs before light rounds expand
  // them, so a node that is busy in bursts does not expand between two of them. Flush() and
  // Close() expand at once.
  std::chrono::milliseconds expand_delay{100};
  // Close() expands packs for at most this long (~10 M calls' rows at ~0.9 µs each); what is
  // left stays in packs, counted by the reports, and is expanded after the next open.
  std::chrono::milliseconds close_expand_budget{10000};
  // CPUs the writer thread may run on; empty: those of the thread that calls Open(). A node
  // opens the ledger from a pinned worker: pass the process's CPUs so the writer does not
  // share that one worker's CPU.
  std::vector<int> writer_cpus;
};

struct OpenReport {
  uint64_t rows = 0;             // invocation rows present
  uint64_t aggregated = 0;       // records present only in overflow aggregates
  uint64_t packed = 0;           // records present in packs, not expanded yet
  uint64_t rows_lost = 0;        // newly detected: lost in the crash before this open
  uint64_t rows_lost_total = 0;  // all losses ever detected
  uint64_t next_seq = 0;         // the sequence number the next Push will take
};

struct LedgerStats {
  uint64_t rows_written = 0;
  uint64_t intervals_written = 0;
  uint64_t overflowed = 0;  // records folded into overflow aggregates (queue full)
  uint64_t overflow_rows = 0;
  uint64_t records_packed = 0;    // records written into packs
  uint64_t records_expanded = 0;  // records moved from packs into invocations rows
  uint64_t packs_pending = 0;     // pack rows not expanded yet
  uint64_t batches = 0;
  uint64_t failed_batches = 0;  // retried on the next round
};

struct PushResult {
  uint64_t seq = 0;
  bool aggregated = false;  // the queue was full: folded into the overflow aggregate
};

class Ledger {
 public:
  // Opens or creates the database (WAL, synchronous=NORMAL) and the sequence file, detects
  // rows lost in a crash, starts the writer thread. Errors: kInvalidArgument for bad options;
  // kIo for files; kAlreadyExists when another process has the ledger open.
  static junction::Status<std::unique_ptr<Ledger>> Open(const LedgerOptions& options);

  ~Ledger();  // Close()s
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  const OpenReport& open_report() const { return report_; }

  // Queues one invocation record under the next sequence number (returned). Non-blocking, no
  // allocation, no system call: one atomic add on the sequence page and a copy into the
  // producer's ring; when the ring is full, a short per-producer lock (shared only with the
  // writer) folds the record into a fixed-size overflow aggregate.
  // Errors: kInvalidArgument for a producer index out of range; kClosed after Close().
  junction::Status<PushResult> Push(uint32_t producer, const InvocationRecord& record);
  // Queues n records at once, each built where it will lie in the ring (no staging copy of a
  // 344-byte record): fill(std::span<InvocationRecord> out, size_t first) writes records
  // first .. first + out.size() - 1 of the n, every field (a slot holds an older record; seq is
  // set after fill returns). It is called once, or twice where the claim wraps the ring's end,
  // for as many as the ring has room for; the rest are filled one at a time into a scratch
  // record and folded into the overflow aggregates, as Push does with a full ring. Returns how
  // many were aggregated. Errors as Push's, checked before any is queued (fill not called).
  template <class Fill>
  junction::Status<size_t> PushMany(uint32_t producer, size_t n, Fill&& fill);
  // Queues one interval row. One thread only. Errors: kClosed after Close().
  junction::Status<void> PushInterval(const IntervalRecord& record);

  // Blocks until every record pushed before the call is committed as an invocations row
  // (packs expanded). Errors: the writer's last SQLite error if a batch failed; kClosed after
  // Close().
  junction::Status<void> Flush();
  // Drains, commits, expands packs (for up to close_expand_budget), stops the writer;
  // idempotent. Returns the last write error, if any.
  junction::Status<void> Close();

  LedgerStats stats() const;

  // How long the writer waits before its next round: the flush interval, or while it packs
  // (the last round took `taken` >= pack_at records in `since_last`) about the time a batch's
  // worth (max_batch, at most half a ring) takes to arrive at that rate, up to
  // kMaxRoundStretch flush intervals. Pure; public for tests.
  static constexpr int kMaxRoundStretch = 5;
  static std::chrono::nanoseconds RoundWait(const LedgerOptions& options, size_t taken,
                                            std::chrono::nanoseconds since_last);
  size_t ApproxQueued(uint32_t producer) const;

 private:
  struct Aggregate {
    FixedString<64> function;
    FixedString<64> ns;
    uint64_t records = 0;
    uint64_t cycles = 0;
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
    uint64_t errors = 0;  // status >= 400
    int64_t first_start_ns = 0;
    int64_t last_end_ns = 0;
    int64_t wall_ns = 0;
    ZoneJoules joules;
    double grams = 0.0;
    double embodied_grams = 0.0;
    uint64_t min_seq = 0;
    uint64_t max_seq = 0;
  };
  static constexpr size_t kOverflowSlots = 32;  // the last slot takes every further function
  struct alignas(64) Producer {
    explicit Producer(size_t capacity) : queue(capacity) {}
    SpscQueue<InvocationRecord> queue;  // records with their seq, as they will be written
    std::mutex overflow_mu;
    std::array<Aggregate, kOverflowSlots> slots;
    size_t used = 0;
    std::atomic<uint64_t> overflowed{0};
  };
  struct SeqPage;

  explicit Ledger(const LedgerOptions& options);
  // Push/PushMany's checks (producer in range, not closed).
  junction::Status<void> CheckPush(uint32_t producer) const;
  // Folds a record that found its producer's ring full into the producer's aggregate for its
  // function (Push's slow path).
  void FoldIntoAggregate(Producer& p, uint64_t seq, const InvocationRecord& record);
  // The first of n consecutive sequence numbers (one atomic add on the sequence page).
  uint64_t TakeSeqs(size_t n);
  // The first record after a quiet spell wakes the writer from its long idle sleep.
  void WakeIfIdle() {
    if (writer_idle_.load(std::memory_order_relaxed)) [[unlikely]] {
      std::lock_guard lock(mu_);
      writer_idle_.store(false, std::memory_order_relaxed);
      wake_.notify_one();
    }
  }
  junction::Status<void> OpenFiles();
  junction::Status<void> DetectLosses();
  void WriterLoop();
  struct BatchOutcome {
    size_t taken;  // records taken from the queues this time
    bool ok;       // committed; otherwise kept for a retry
  };
  // Takes up to max_batch records (into packs when the queues hold a pack round's worth, else
  // as rows) and writes them with the intervals and aggregates in one transaction.
  BatchOutcome WriteBatch();
  // Adds one record to its pack builder (writer thread).
  void PackOne(const InvocationRecord& r);

  // Writes batch_'s rows, the builders' packs, the intervals and the aggregates.
  junction::Status<void> WriteBatchRows();
  // Inserts `rows` into invocations (inside the caller's transaction).
  junction::Status<void> InsertInvocations(const std::vector<InvocationRecord>& rows);
  // Inserts the packs_used_ builders' rows (inside the caller's transaction).
  junction::Status<void> InsertPacks();
  // Expands the oldest packs into invocations rows until at least `records` were expanded or
  // none is left, one transaction per pack. Writer thread only.
  junction::Status<void> ExpandPacks(uint64_t records, std::chrono::steady_clock::time_point deadline);
  junction::Status<void> ExpandOnePack();
  // Binds one invocation row at parameters base+1 .. base+23 (texts bound without a copy).
  void BindInvocation(SqliteStatement& st, int base, const InvocationRecord& r);

  LedgerOptions options_;
  OpenReport report_;
  int seq_fd_ = -1;
  SeqPage* seq_ = nullptr;
  // Declared before the statements so it is destroyed after them.
  std::unique_ptr<SqliteDb> db_;
  SqliteStatement insert_invocation_;
  // kRowsPerInsert rows in one INSERT ... VALUES (...),(...): one statement execution per
  // kRowsPerInsert rows instead of one per row (the per-row step/reset/VDBE start was most of
  // the writer's cost per invocation). The rest of a batch goes through insert_invocation_.
  static constexpr int kRowsPerInsert = 32;
  // The writer offers its CPU (sched_yield) after this many multi-row statements inside a
  // transaction (~64 rows). Under EEVDF that hands over only to a thread still owed CPU time
  // (the sampler, a woken worker), not to a worker that polls: measured on the one-core load
  // node, the writer still ran its batches in pieces of up to 4.6 ms at 30k calls/s. Sleeping
  // between 50 µs slices instead bounded them to 0.23 ms but did not move the p99 and cost
  // ~2% of saturated throughput in context switches, so it was not kept (energy.md,
  // 2026-12-06). With a CPU of its own the yield returns at once.
  static constexpr int kStatementsPerYield = 2;
  SqliteStatement insert_invocations_;
  // The same for packing: a yield after about this many records' work (~0.1 ms).
  static constexpr uint64_t kRecordsPerYield = 512;
  uint64_t packed_since_yield_ = 0;  // writer thread
  bool yield_ = true;                // writer thread: false while it flushes or closes
  void OfferCpu();                   // sched_yield() when yield_ and no queue is over half full
  SqliteStatement insert_interval_;
  SqliteStatement insert_aggregate_;
  SqliteStatement insert_pack_;
  SqliteStatement oldest_pack_;
  SqliteStatement delete_pack_;

  std::vector<std::unique_ptr<Producer>> producers_;
  SpscQueue<IntervalRecord> intervals_{4096};
  std::mutex interval_overflow_mu_;
  IntervalRecord interval_overflow_;
  bool has_interval_overflow_ = false;

  // Writer-thread state.
  std::vector<InvocationRecord> batch_;
  std::vector<IntervalRecord> interval_batch_;
  std::vector<Aggregate> aggregate_batch_;
  std::vector<PackBuilder> packs_;  // the batch's packs; packs_used_ of them in use
  size_t packs_used_ = 0;
  size_t last_pack_ = 0;            // the builder the last record went to
  size_t packed_held_ = 0;          // records in the builders, not committed yet
  std::vector<InvocationRecord> expanding_;   // one pack's records while it is expanded
  std::atomic<uint64_t> packs_pending_{0};  // pack rows in the database: written by the writer only
  int64_t expand_after_id_ = 0;     // packs up to this id were expanded or could not be decoded
  uint64_t skipped_packs_ = 0;      // packs this node could not decode (left in place)
  std::chrono::steady_clock::time_point last_packed_{};  // writer thread
  size_t next_producer_ = 0;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t flush_requested_ = 0;  // guarded by mu_
  uint64_t flush_done_ = 0;       // guarded by mu_
  bool stop_ = false;             // guarded by mu_
  // Set by the writer (under mu_) when its last round took no invocation record: it then
  // sleeps kMaxRoundStretch flush intervals (an idle node commits its interval rows 10 times a
  // second, not 50), and the next Push wakes it at once (clearing this under mu_).
  std::atomic<bool> writer_idle_{false};
  std::string last_error_;        // guarded by mu_: the last failed batch's
  std::string expand_error_;      // guarded by mu_: the last failed expansion's (packs kept)
  LedgerStats stats_;             // guarded by mu_ (overflowed is summed from producers)
  std::atomic<bool> closed_{false};
  std::thread writer_;
};

template <class Fill>
junction::Status<size_t> Ledger::PushMany(uint32_t producer, size_t n, Fill&& fill) {
  if (auto ok = CheckPush(producer); !ok) return std::unexpected(ok.error());
  if (n == 0) return size_t{0};
  Producer& p = *producers_[producer];
  const uint64_t base = TakeSeqs(n);
  const size_t queued = p.queue.PushManyWith(n, [&](std::span<InvocationRecord> out, size_t first) {
    fill(out, first);
    for (size_t i = 0; i < out.size(); ++i) out[i].seq = base + first + i;
  });
  if (queued > 0) WakeIfIdle();
  InvocationRecord scratch;
  for (size_t i = queued; i < n; ++i) {
    fill(std::span<InvocationRecord>(&scratch, 1), i);
    FoldIntoAggregate(p, base + i, scratch);
  }
  return n - queued;
}

}  // namespace energy
