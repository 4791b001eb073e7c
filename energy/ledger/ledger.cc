// ledger.cc — the ledger: schema, loss detection on open, producer queues, the writer thread.
#include "energy/ledger/ledger.h"

#include <pthread.h>
#include <sched.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

constexpr uint64_t kSeqMagic = 0x6661617365716e6fULL;  // "faaseqno"
constexpr int kPageBytes = 16384;
// 2: intervals carry their carbon (the *_grams columns); 3: invocation_packs.
constexpr int kSchemaVersion = 3;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS invocations (
  seq INTEGER PRIMARY KEY,
  call_id TEXT NOT NULL, function TEXT NOT NULL, namespace TEXT NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, wall_ns INTEGER NOT NULL,
  cycles INTEGER NOT NULL,
  package_j REAL, core_j REAL, uncore_j REAL, dram_j REAL, psys_j REAL, gpu_j REAL,
  total_j REAL NOT NULL, source TEXT NOT NULL,
  grams REAL NOT NULL, intensity_g_per_kwh REAL NOT NULL, intensity_kind TEXT NOT NULL,
  embodied_grams REAL NOT NULL, status INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL);
-- No secondary index: it was 45% of the writer's cost per row (energy_ledger_bench
-- BM_LedgerWriteRows: 2.6-2.9 us with it, 1.5 without), and the one query over this table
-- (faasnode carbon report, /system/carbon) filters on end_ns through a UNION with the
-- aggregates, which no index on it serves. Ledgers made before 2026-12-04 have it: dropped.
DROP INDEX IF EXISTS invocations_by_function;
CREATE TABLE IF NOT EXISTS overflow_aggregates (
  id INTEGER PRIMARY KEY, written_ns INTEGER NOT NULL,
  function TEXT NOT NULL, namespace TEXT NOT NULL, records INTEGER NOT NULL,
  min_seq INTEGER NOT NULL, max_seq INTEGER NOT NULL,
  first_start_ns INTEGER NOT NULL, last_end_ns INTEGER NOT NULL, wall_ns INTEGER NOT NULL,
  cycles INTEGER NOT NULL,
  package_j REAL, core_j REAL, uncore_j REAL, dram_j REAL, psys_j REAL, gpu_j REAL,
  total_j REAL NOT NULL, source TEXT NOT NULL, grams REAL NOT NULL,
  embodied_grams REAL NOT NULL, errors INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS intervals (
  id INTEGER PRIMARY KEY, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  source TEXT NOT NULL,
  package_j REAL, core_j REAL, uncore_j REAL, dram_j REAL, psys_j REAL, gpu_j REAL,
  meter_total_j REAL NOT NULL, invocations_j REAL NOT NULL, idle_j REAL NOT NULL,
  overhead_j REAL NOT NULL, unaccounted_j REAL NOT NULL,
  accounts INTEGER NOT NULL, merged INTEGER NOT NULL,
  intensity_g_per_kwh REAL, meter_grams REAL, invocations_grams REAL, idle_grams REAL,
  overhead_grams REAL, unaccounted_grams REAL);
-- Records the writer stored while it was behind, not yet expanded into invocations rows
-- (ledger.h, "Packs"; body format: pack.h). One row per function, namespace, source set and
-- hour of a batch.
CREATE TABLE IF NOT EXISTS invocation_packs (
  id INTEGER PRIMARY KEY, function TEXT NOT NULL, namespace TEXT NOT NULL,
  source TEXT NOT NULL, source_bits INTEGER NOT NULL, records INTEGER NOT NULL,
  min_seq INTEGER NOT NULL, max_seq INTEGER NOT NULL,
  first_start_ns INTEGER NOT NULL, last_end_ns INTEGER NOT NULL,
  total_j REAL NOT NULL, grams REAL NOT NULL, embodied_grams REAL NOT NULL,
  intensity_kinds TEXT NOT NULL, format INTEGER NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS crash_reports (
  id INTEGER PRIMARY KEY, detected_ns INTEGER NOT NULL, rows_lost INTEGER NOT NULL,
  seq_issued INTEGER NOT NULL);
)sql";

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Binds the six zone columns starting at `first`: NULL for a zone without a figure.
void BindZones(SqliteStatement& st, int first, const ZoneJoules& z) {
  for (size_t i = 0; i < kZoneCount; ++i) {
    Zone zone = kAllZones[i];
    if (z.Has(zone)) {
      st.Bind(first + static_cast<int>(i), z[zone].value);
    } else {
      st.BindNull(first + static_cast<int>(i));
    }
  }
}

}  // namespace

struct Ledger::SeqPage {
  uint64_t magic;
  std::atomic<uint64_t> next;  // the next sequence number to hand out (first is 1)
};

Ledger::Ledger(const LedgerOptions& options) : options_(options) {}

Status<std::unique_ptr<Ledger>> Ledger::Open(const LedgerOptions& options) {
  if (options.path.empty() || options.producers == 0 || options.queue_capacity < 2 ||
      options.max_batch == 0 || options.flush_interval.count() <= 0 || options.expand_delay.count() < 0 ||
      options.close_expand_budget.count() < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "ledger options: path must be set, producers >= 1, queue_capacity >= 2, "
                     "max_batch >= 1, flush_interval > 0, expand_delay >= 0 and close_expand_budget >= 0; "
                     "fix energy.ledger in the config");
  }
  std::unique_ptr<Ledger> l(new Ledger(options));
  if (auto ok = l->OpenFiles(); !ok) return std::unexpected(ok.error());
  if (auto ok = l->DetectLosses(); !ok) return std::unexpected(ok.error());
  for (uint32_t i = 0; i < options.producers; ++i) {
    l->producers_.push_back(std::make_unique<Producer>(options.queue_capacity));
  }
  l->batch_.reserve(options.max_batch);
  l->interval_batch_.reserve(4096);
  l->aggregate_batch_.reserve(kOverflowSlots * options.producers);
  l->writer_ = std::thread([p = l.get()] { p->WriterLoop(); });
  return l;
}

Status<void> Ledger::OpenFiles() {
  std::string seq_path = options_.path + "-seq";
  seq_fd_ = ::open(seq_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (seq_fd_ < 0) {
    return std::unexpected(junction::Error::FromErrno(fmt::format(
        "cannot open the ledger sequence file {}; check the directory's permissions", seq_path)));
  }
  if (flock(seq_fd_, LOCK_EX | LOCK_NB) != 0) {
    return MakeError(ErrorCode::kAlreadyExists,
                     fmt::format("ledger {} is open in another process (lock on {}); stop that "
                                 "node or use another ledger path",
                                 options_.path, seq_path));
  }
  struct stat st;
  if (fstat(seq_fd_, &st) != 0 || (st.st_size < 4096 && ftruncate(seq_fd_, 4096) != 0)) {
    return std::unexpected(
        junction::Error::FromErrno(fmt::format("cannot size the sequence file {}", seq_path)));
  }
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, seq_fd_, 0);
  if (p == MAP_FAILED) {
    return std::unexpected(
        junction::Error::FromErrno(fmt::format("cannot map the sequence file {}", seq_path)));
  }
  seq_ = static_cast<SeqPage*>(p);
  if (seq_->magic != kSeqMagic) {
    seq_->next.store(0, std::memory_order_relaxed);  // unknown: DetectLosses() uses the rows
    seq_->magic = kSeqMagic;
  }

  auto db = SqliteDb::Open(options_.path, {});
  if (!db) return std::unexpected(db.error());
  db_ = std::make_unique<SqliteDb>(std::move(*db));
  // Only takes effect on a new, empty database (before WAL mode is set); older ledgers keep
  // their 4 KiB pages. Per row, 16 KiB pages cost the writer ~20% less CPU (fewer b-tree page
  // splits, and fewer WAL frames, each written with two pwrite calls): energy_ledger_bench
  // BM_LedgerWriteRows cpu_ns_per_row, docs/benchmarks/energy.md.
  if (auto ok = db_->Exec(fmt::format("PRAGMA page_size={}", kPageBytes)); !ok) return ok;
  auto mode = db_->QueryText("PRAGMA journal_mode=WAL");
  if (!mode) return std::unexpected(mode.error());
  if (*mode != "wal") {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("ledger {} cannot use WAL mode (got '{}'): put it on a local "
                                 "file system",
                                 options_.path, *mode));
  }
  if (auto ok = db_->Exec("PRAGMA synchronous=NORMAL"); !ok) return ok;
  auto existing = db_->QueryInt64(
      "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='invocations'");
  if (!existing) return std::unexpected(existing.error());
  if (*existing == 0) seq_->next.store(0, std::memory_order_relaxed);  // a new ledger
  if (auto ok = db_->Exec(kSchema); !ok) return ok;
  auto version =
      db_->QueryInt64("SELECT coalesce(max(value), 0) FROM meta WHERE key = 'schema_version'");
  if (!version) return std::unexpected(version.error());
  if (*version > kSchemaVersion) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("ledger {} has schema version {}, newer than this node's {}: "
                                 "upgrade the node or use another ledger path",
                                 options_.path, *version, kSchemaVersion));
  }
  if (*version == 1) {
    // A version-1 ledger's intervals have no carbon columns: add them (NULL = not priced).
    for (const char* column : {"intensity_g_per_kwh", "meter_grams", "invocations_grams",
                               "idle_grams", "overhead_grams", "unaccounted_grams"}) {
      if (auto ok = db_->Exec(fmt::format("ALTER TABLE intervals ADD COLUMN {} REAL", column));
          !ok) {
        return ok;
      }
    }
  }
  if (auto ok = db_->Exec(
          fmt::format("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', {})",
                      kSchemaVersion));
      !ok) {
    return ok;
  }
  auto inv = db_->Prepare(
      "INSERT INTO invocations VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,"
      "?17,?18,?19,?20,?21,?22,?23)");
  if (!inv) return std::unexpected(inv.error());
  insert_invocation_ = std::move(*inv);
  std::string multi = "INSERT INTO invocations VALUES ";
  for (int row = 0; row < kRowsPerInsert; ++row) {
    multi += row == 0 ? "(" : ",(";
    for (int col = 1; col <= 23; ++col) {
      multi += fmt::format("{}?{}", col == 1 ? "" : ",", row * 23 + col);
    }
    multi += ")";
  }
  auto invs = db_->Prepare(multi);
  if (!invs) return std::unexpected(invs.error());
  insert_invocations_ = std::move(*invs);
  auto iv = db_->Prepare(
      "INSERT INTO intervals (begin_ns,end_ns,source,package_j,core_j,uncore_j,dram_j,psys_j,"
      "gpu_j,meter_total_j,invocations_j,idle_j,overhead_j,unaccounted_j,accounts,merged,"
      "intensity_g_per_kwh,meter_grams,invocations_grams,idle_grams,overhead_grams,"
      "unaccounted_grams) "
      "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22)");
  if (!iv) return std::unexpected(iv.error());
  insert_interval_ = std::move(*iv);
  auto ag = db_->Prepare(
      "INSERT INTO overflow_aggregates (written_ns,function,namespace,records,min_seq,max_seq,"
      "first_start_ns,last_end_ns,wall_ns,cycles,package_j,core_j,uncore_j,dram_j,psys_j,gpu_j,"
      "total_j,source,grams,embodied_grams,errors,bytes_in,bytes_out) VALUES "
      "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)");
  if (!ag) return std::unexpected(ag.error());
  insert_aggregate_ = std::move(*ag);
  auto pk = db_->Prepare(
      "INSERT INTO invocation_packs (function,namespace,source,source_bits,records,min_seq,max_seq,"
      "first_start_ns,last_end_ns,total_j,grams,embodied_grams,intensity_kinds,format,body) VALUES "
      "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)");
  if (!pk) return std::unexpected(pk.error());
  insert_pack_ = std::move(*pk);
  auto op = db_->Prepare(
      "SELECT id, function, namespace, source_bits, format, body FROM invocation_packs WHERE id > ?1 "
      "ORDER BY id LIMIT 1");
  if (!op) return std::unexpected(op.error());
  oldest_pack_ = std::move(*op);
  auto dp = db_->Prepare("DELETE FROM invocation_packs WHERE id = ?1");
  if (!dp) return std::unexpected(dp.error());
  delete_pack_ = std::move(*dp);
  return {};
}

Status<void> Ledger::DetectLosses() {
  auto rows = db_->QueryInt64("SELECT count(*) FROM invocations");
  auto max_seq = db_->QueryInt64("SELECT coalesce(max(seq), 0) FROM invocations");
  auto agg_max = db_->QueryInt64("SELECT coalesce(max(max_seq), 0) FROM overflow_aggregates");
  auto aggregated = db_->QueryInt64("SELECT coalesce(sum(records), 0) FROM overflow_aggregates");
  auto known = db_->QueryInt64("SELECT coalesce(sum(rows_lost), 0) FROM crash_reports");
  auto packed = db_->QueryInt64("SELECT coalesce(sum(records), 0) FROM invocation_packs");
  auto pack_max = db_->QueryInt64("SELECT coalesce(max(max_seq), 0) FROM invocation_packs");
  auto packs = db_->QueryInt64("SELECT count(*) FROM invocation_packs");
  for (const auto* s : {&rows, &max_seq, &agg_max, &aggregated, &known, &packed, &pack_max, &packs}) {
    if (!*s) return std::unexpected(s->error());
  }
  uint64_t next = seq_->next.load(std::memory_order_relaxed);
  uint64_t issued = next > 0 ? next - 1 : 0;
  issued = std::max<uint64_t>({issued, static_cast<uint64_t>(*max_seq), static_cast<uint64_t>(*agg_max),
                               static_cast<uint64_t>(*pack_max)});
  uint64_t present =
      static_cast<uint64_t>(*rows) + static_cast<uint64_t>(*aggregated) + static_cast<uint64_t>(*packed);
  uint64_t lost_total = issued > present ? issued - present : 0;
  report_.rows = static_cast<uint64_t>(*rows);
  report_.aggregated = static_cast<uint64_t>(*aggregated);
  report_.packed = static_cast<uint64_t>(*packed);
  packs_pending_ = static_cast<uint64_t>(*packs);
  report_.rows_lost_total = lost_total;
  report_.rows_lost =
      lost_total > static_cast<uint64_t>(*known) ? lost_total - static_cast<uint64_t>(*known) : 0;
  report_.next_seq = issued + 1;
  if (report_.rows_lost > 0) {
    auto st = db_->Prepare(
        "INSERT INTO crash_reports (detected_ns, rows_lost, seq_issued) VALUES (?1, ?2, ?3)");
    if (!st) return std::unexpected(st.error());
    st->Bind(1, RealtimeNs());
    st->Bind(2, static_cast<int64_t>(report_.rows_lost));
    st->Bind(3, static_cast<int64_t>(issued));
    if (auto ok = st->Run(); !ok) return ok;
  }
  seq_->next.store(issued + 1, std::memory_order_release);
  return {};
}

Ledger::~Ledger() {
  (void)Close();
  if (seq_ != nullptr) munmap(seq_, 4096);
  if (seq_fd_ >= 0) ::close(seq_fd_);  // releases the flock
}

Status<void> Ledger::CheckPush(uint32_t producer) const {
  if (producer >= producers_.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("ledger producer {} out of range (the ledger has {}): open it "
                                 "with one producer per core",
                                 producer, producers_.size()));
  }
  if (closed_.load(std::memory_order_relaxed)) {
    return MakeError(ErrorCode::kClosed, "ledger is closed: reopen it to record invocations");
  }
  return {};
}

uint64_t Ledger::TakeSeqs(size_t n) { return seq_->next.fetch_add(n, std::memory_order_relaxed); }

Status<PushResult> Ledger::Push(uint32_t producer, const InvocationRecord& record) {
  if (auto ok = CheckPush(producer); !ok) return std::unexpected(ok.error());
  Producer& p = *producers_[producer];
  PushResult r;
  r.seq = TakeSeqs(1);
  if (p.queue.TryPushWith([&](InvocationRecord& q) {
        q = record;
        q.seq = r.seq;
      })) {
    WakeIfIdle();
    return r;
  }
  r.aggregated = true;
  FoldIntoAggregate(p, r.seq, record);
  return r;
}

void Ledger::FoldIntoAggregate(Producer& p, uint64_t seq, const InvocationRecord& record) {
  std::lock_guard lock(p.overflow_mu);
  Aggregate* slot = nullptr;
  for (size_t i = 0; i < p.used; ++i) {
    if (p.slots[i].function == record.function && p.slots[i].ns == record.ns) {
      slot = &p.slots[i];
      break;
    }
  }
  if (slot == nullptr) {
    if (p.used < kOverflowSlots) {
      slot = &p.slots[p.used++];
      *slot = Aggregate{};
      slot->function = record.function;
      slot->ns = record.ns;
      if (p.used == kOverflowSlots) slot->function.Assign("*");  // every further function
      slot->first_start_ns = record.start_ns;
      slot->min_seq = seq;
    } else {
      slot = &p.slots[kOverflowSlots - 1];
    }
  }
  ++slot->records;
  slot->cycles += record.cycles;
  slot->bytes_in += record.bytes_in;
  slot->bytes_out += record.bytes_out;
  slot->errors += record.status >= 400 ? 1 : 0;
  slot->first_start_ns = std::min(slot->first_start_ns, record.start_ns);
  slot->last_end_ns = std::max(slot->last_end_ns, record.end_ns);
  slot->wall_ns += record.end_ns - record.start_ns;
  slot->joules.AddScaled(record.joules, 1.0);
  slot->grams += record.grams;
  slot->embodied_grams += record.embodied_grams;
  slot->min_seq = std::min(slot->min_seq, seq);
  slot->max_seq = std::max(slot->max_seq, seq);
  p.overflowed.fetch_add(1, std::memory_order_relaxed);
}

Status<void> Ledger::PushInterval(const IntervalRecord& record) {
  if (closed_.load(std::memory_order_relaxed)) {
    return MakeError(ErrorCode::kClosed, "ledger is closed: reopen it to record intervals");
  }
  if (intervals_.TryPush(record)) return {};
  std::lock_guard lock(interval_overflow_mu_);
  if (!has_interval_overflow_) {
    interval_overflow_ = record;
    has_interval_overflow_ = true;
    return {};
  }
  IntervalRecord& m = interval_overflow_;
  m.begin_ns = std::min(m.begin_ns, record.begin_ns);
  m.end_ns = std::max(m.end_ns, record.end_ns);
  m.meter.AddScaled(record.meter, 1.0);
  m.invocations_j += record.invocations_j;
  m.idle_j += record.idle_j;
  m.overhead_j += record.overhead_j;
  m.unaccounted_j += record.unaccounted_j;
  m.accounts += record.accounts;
  m.merged += record.merged;
  if (m.priced && record.priced) {
    const double j = m.meter.NodeTotal().value;
    m.meter_grams += record.meter_grams;
    m.invocations_grams += record.invocations_grams;
    m.idle_grams += record.idle_grams;
    m.overhead_grams += record.overhead_grams;
    m.unaccounted_grams += record.unaccounted_grams;
    m.intensity_g_per_kwh = j > 0 ? m.meter_grams * 3.6e6 / j : record.intensity_g_per_kwh;
  } else {
    m.priced = false;
  }
  return {};
}

Status<void> Ledger::Flush() {
  std::unique_lock lock(mu_);
  if (stop_) return MakeError(ErrorCode::kClosed, "ledger is closed: nothing to flush");
  uint64_t ticket = ++flush_requested_;
  wake_.notify_one();
  done_.wait(lock, [&] { return flush_done_ >= ticket; });
  if (!last_error_.empty()) {
    return MakeError(ErrorCode::kIo, "ledger write failed (will retry): " + last_error_);
  }
  if (!expand_error_.empty()) {
    return MakeError(ErrorCode::kIo, "ledger packs not expanded into rows (they stay committed in "
                                     "invocation_packs and the reports count them): " + expand_error_);
  }
  return {};
}

Status<void> Ledger::Close() {
  {
    std::lock_guard lock(mu_);
    if (closed_.exchange(true)) return {};
    stop_ = true;
  }
  wake_.notify_one();
  if (writer_.joinable()) writer_.join();
  std::lock_guard lock(mu_);
  if (!last_error_.empty()) {
    return MakeError(ErrorCode::kIo, "ledger closed with unwritten records: " + last_error_);
  }
  if (!expand_error_.empty()) {
    return MakeError(ErrorCode::kIo, "ledger closed with packs not expanded into rows (they stay committed in "
                                     "invocation_packs and the reports count them): " + expand_error_);
  }
  return {};
}

LedgerStats Ledger::stats() const {
  std::lock_guard lock(mu_);
  LedgerStats s = stats_;
  s.overflowed = 0;
  s.packs_pending = packs_pending_.load(std::memory_order_relaxed);
  for (const auto& p : producers_) s.overflowed += p->overflowed.load(std::memory_order_relaxed);
  return s;
}

size_t Ledger::ApproxQueued(uint32_t producer) const {
  return producer < producers_.size() ? producers_[producer]->queue.ApproxSize() : 0;
}

void Ledger::WriterLoop() {
  pthread_setname_np(pthread_self(), "faasnode-ledger");
  if (!options_.writer_cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : options_.writer_cpus) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: a hint
  }
  // While the writer packs, each round waits about as long as a batch's worth of records takes
  // to arrive (measured from the last round), up to kMaxRoundStretch flush intervals and never
  // more than half a producer's ring: fewer, larger transactions (each costs a fixed ~0.1 ms
  // of locks, WAL header and wake-up here; energy_ledger_bench WritePacks: 230-270 ns per
  // record at 1 000 per round, 130-150 at 20 000).
  std::chrono::nanoseconds wait = options_.flush_interval;
  auto round_start = std::chrono::steady_clock::now();
  while (true) {
    uint64_t ticket;
    bool stopping;
    bool flushing;
    {
      std::unique_lock lock(mu_);
      const bool idle = writer_idle_.load(std::memory_order_relaxed);
      wake_.wait_for(lock, idle ? options_.flush_interval * kMaxRoundStretch : wait, [&] {
        return stop_ || flush_requested_ > flush_done_ || (idle && !writer_idle_.load(std::memory_order_relaxed));
      });
      writer_idle_.store(false, std::memory_order_relaxed);
      ticket = flush_requested_;
      stopping = stop_;
      flushing = flush_requested_ > flush_done_;
    }
    // Flushing or closing, nobody is served faster for the writer's yields: under a loaded
    // machine each one can cost a whole scheduler slice (a million rows took 10+ s to expand).
    yield_ = !(flushing || stopping);
    // Drain until the queues are empty (several transactions when there is a backlog). A
    // failing batch stays in batch_ and is retried on the next round (three tries at Close).
    int failures = 0;
    size_t round_taken = 0;
    while (true) {
      BatchOutcome o = WriteBatch();
      round_taken += o.taken;
      if (!o.ok) {
        if (!stopping || ++failures >= 3) break;
        continue;
      }
      if (o.taken < options_.max_batch) break;
    }
    const auto now = std::chrono::steady_clock::now();
    wait = RoundWait(options_, round_taken, now - round_start);
    round_start = now;
    // Slack (a light round), a Flush or the Close: turn packs into rows. A light round expands
    // about one batch's worth, so a burst's packs drain over the following quiet rounds.
    const bool light = (options_.pack_at == 0 || round_taken < options_.pack_at) &&
                       std::chrono::steady_clock::now() - last_packed_ >= options_.expand_delay;
    if (packs_pending_ > 0 && (light || flushing || stopping)) {
      // A Flush expands everything; Close for at most close_expand_budget (a node that was
      // busy for hours must not take as long to stop); a light round about one batch.
      const auto deadline = stopping && !flushing ? std::chrono::steady_clock::now() + options_.close_expand_budget
                                                  : std::chrono::steady_clock::time_point::max();
      auto ok = ExpandPacks(flushing || stopping ? UINT64_MAX : options_.max_batch, deadline);
      std::lock_guard lock(mu_);
      if (ok) {
        if (skipped_packs_ == 0) expand_error_.clear();  // else: still true of the packs passed over
      } else {
        ++stats_.failed_batches;
        expand_error_ = ok.error().message();
      }
    }
    {
      std::lock_guard lock(mu_);
      flush_done_ = std::max(flush_done_, ticket);
      // Nothing came and nothing is left to expand: sleep long until a record comes (Push).
      // A record pushed between this round's drain and here waits for that sleep (at most
      // kMaxRoundStretch flush intervals): Push does not fence to catch that instant.
      writer_idle_.store(round_taken == 0 && packs_pending_ == 0, std::memory_order_relaxed);
    }
    done_.notify_all();
    if (stopping) return;
  }
}

void Ledger::OfferCpu() {
  if (!yield_) return;
  // A writer that yields to a busy-polling worker on its CPU gets ~512 records done per the
  // worker's whole slice: at 400k calls/s a quarter of them then overflowed into aggregates
  // (load.md, 2026-12-07 "fifth session"). While a queue is over half full the rows matter more
  // than the worker's next slice: no yield until it has caught up.
  for (const auto& p : producers_) {
    if (p->queue.ApproxSize() > p->queue.capacity() / 2) return;
  }
  sched_yield();
}

std::chrono::nanoseconds Ledger::RoundWait(const LedgerOptions& options, size_t taken,
                                           std::chrono::nanoseconds since_last) {
  const std::chrono::nanoseconds base = options.flush_interval;
  if (options.pack_at == 0 || taken < options.pack_at || since_last.count() <= 0) return base;
  const double per_ns = static_cast<double>(taken) / static_cast<double>(since_last.count());
  const double target = static_cast<double>(std::min(options.max_batch, options.queue_capacity / 2));
  const auto want = std::chrono::nanoseconds(static_cast<int64_t>(target / per_ns));
  return std::clamp(want, base, base * kMaxRoundStretch);
}

Ledger::BatchOutcome Ledger::WriteBatch() {
  // Busy (a pack round's worth queued, or packs of a failed commit still held): the records go
  // from the rings straight into the pack builders, read once where they lie; otherwise they
  // are copied out for rows. (Copying a ~360-byte record into batch_ and reading it again cost
  // as much as encoding it: energy.md, "fifth session".)
  size_t queued = 0;
  for (const auto& p : producers_) queued += p->queue.ApproxSize();
  const bool as_packs = options_.pack_at > 0 && (queued >= options_.pack_at || packed_held_ > 0);
  size_t taken = 0;
  size_t held = batch_.size() + packed_held_;  // records in this batch, a failed one's included
  // Each producer's fair share of the batch's room first, then what is left in turn, so that no
  // core's queue starves.
  const size_t n = producers_.size();
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k = 0; k < n && held < options_.max_batch; ++k) {
      const size_t room = options_.max_batch - held;
      const size_t share = pass == 0 ? std::max<size_t>(1, room / (n - k)) : room;
      auto& queue = producers_[(next_producer_ + k) % n]->queue;
      const size_t got = as_packs ? queue.ConsumeUpTo(share, [this](const InvocationRecord& r) { PackOne(r); })
                                  : queue.PopInto(batch_, share);
      taken += got;
      held += got;
    }
  }
  next_producer_ = (next_producer_ + 1) % n;
  if (!as_packs && options_.pack_at > 0 && batch_.size() >= options_.pack_at) {
    // A burst arrived between the look at the queues and the pop: as busy a round as any.
    for (const InvocationRecord& r : batch_) PackOne(r);
    batch_.clear();
  }
  IntervalRecord ir;
  while (interval_batch_.size() < 4096 && intervals_.TryPop(&ir)) interval_batch_.push_back(ir);
  {
    std::lock_guard lock(interval_overflow_mu_);
    if (has_interval_overflow_) {
      interval_batch_.push_back(interval_overflow_);
      has_interval_overflow_ = false;
    }
  }
  for (auto& p : producers_) {
    std::lock_guard lock(p->overflow_mu);
    for (size_t i = 0; i < p->used; ++i) aggregate_batch_.push_back(p->slots[i]);
    p->used = 0;
  }
  if (batch_.empty() && packed_held_ == 0 && interval_batch_.empty() && aggregate_batch_.empty()) {
    return {taken, true};
  }
  auto ok = WriteBatchRows();
  std::lock_guard lock(mu_);
  if (ok) {
    if (packed_held_ > 0) {
      stats_.records_packed += packed_held_;
      last_packed_ = std::chrono::steady_clock::now();
      packs_pending_ += packs_used_;
    }
    stats_.rows_written += batch_.size();
    stats_.intervals_written += interval_batch_.size();
    stats_.overflow_rows += aggregate_batch_.size();
    ++stats_.batches;
    last_error_.clear();
    batch_.clear();
    packs_used_ = 0;
    packed_held_ = 0;
    interval_batch_.clear();
    aggregate_batch_.clear();
  } else {
    // Everything stays held (rows in batch_, records in the builders) for the next round.
    ++stats_.failed_batches;
    last_error_ = ok.error().message();
  }
  return {taken, ok.has_value()};
}

void Ledger::PackOne(const InvocationRecord& r) {
  // A batch has few pack keys (functions × sources), and consecutive records mostly share one,
  // so the last match is tried first.
  PackBuilder* b = nullptr;
  if (packs_used_ > 0 && packs_[last_pack_].Matches(r)) {
    b = &packs_[last_pack_];
  } else {
    for (size_t i = 0; i < packs_used_; ++i) {
      if (packs_[i].Matches(r)) {
        b = &packs_[i];
        last_pack_ = i;
        break;
      }
    }
  }
  if (b == nullptr) {
    if (packs_used_ == packs_.size()) packs_.emplace_back();
    last_pack_ = packs_used_++;
    b = &packs_[last_pack_];
    b->Reset(r);
  }
  b->Append(r.seq, r);
  ++packed_held_;
  // Offer the CPU now and then, as the row inserts do (kStatementsPerYield): a worker that
  // shares it waits for a slice of the batch, not all of it (8192 records: ~1-2 ms).
  if (++packed_since_yield_ == kRecordsPerYield) {
    packed_since_yield_ = 0;
    OfferCpu();
  }
}

void Ledger::BindInvocation(SqliteStatement& st, int base, const InvocationRecord& r) {
  st.Bind(base + 1, static_cast<int64_t>(r.seq));
  st.BindStaticText(base + 2, r.call_id.view());
  st.BindStaticText(base + 3, r.function.view());
  st.BindStaticText(base + 4, r.ns.view());
  st.Bind(base + 5, r.start_ns);
  st.Bind(base + 6, r.end_ns);
  st.Bind(base + 7, r.end_ns - r.start_ns);
  st.Bind(base + 8, static_cast<int64_t>(r.cycles));
  BindZones(st, base + 9, r.joules);
  st.Bind(base + 15, r.joules.NodeTotal().value);
  st.BindStaticText(base + 16, r.joules.sources.Name());
  st.Bind(base + 17, r.grams);
  st.Bind(base + 18, r.intensity_g_per_kwh);
  st.BindStaticText(base + 19, carbon::IntensityKindName(r.intensity_kind));
  st.Bind(base + 20, r.embodied_grams);
  st.Bind(base + 21, static_cast<int64_t>(r.status));
  st.Bind(base + 22, static_cast<int64_t>(r.bytes_in));
  st.Bind(base + 23, static_cast<int64_t>(r.bytes_out));
}

Status<void> Ledger::InsertInvocations(const std::vector<InvocationRecord>& rows) {
  // Full groups of kRowsPerInsert rows in one statement each, the rest one by one.
  size_t i = 0;
  int statements = 0;
  for (; i + kRowsPerInsert <= rows.size(); i += kRowsPerInsert) {
    SqliteStatement& st = insert_invocations_;
    for (int row = 0; row < kRowsPerInsert; ++row) BindInvocation(st, row * 23, rows[i + row]);
    if (auto ok = st.RunRebound(); !ok) return ok;
    if (++statements % kStatementsPerYield == 0) OfferCpu();
  }
  for (; i < rows.size(); ++i) {
    BindInvocation(insert_invocation_, 0, rows[i]);
    if (auto ok = insert_invocation_.RunRebound(); !ok) return ok;
  }
  return {};
}

Status<void> Ledger::InsertPacks() {
  SqliteStatement& st = insert_pack_;
  for (size_t i = 0; i < packs_used_; ++i) {
    const PackBuilder& b = packs_[i];
    st.BindStaticText(1, b.function());
    st.BindStaticText(2, b.ns());
    st.BindStaticText(3, b.sources().Name());
    st.Bind(4, static_cast<int64_t>(b.sources().bits()));
    st.Bind(5, static_cast<int64_t>(b.records()));
    st.Bind(6, static_cast<int64_t>(b.min_seq()));
    st.Bind(7, static_cast<int64_t>(b.max_seq()));
    st.Bind(8, b.first_start_ns());
    st.Bind(9, b.last_end_ns());
    st.Bind(10, b.total_j());
    st.Bind(11, b.grams());
    st.Bind(12, b.embodied_grams());
    st.BindText(13, b.IntensityKinds());
    st.Bind(14, static_cast<int64_t>(kPackFormat));
    st.BindStaticBlob(15, b.body());
    if (auto ok = st.RunRebound(); !ok) return ok;
    packed_since_yield_ += b.records() / 2;  // writing a record's bytes costs about half its encoding
    if (packed_since_yield_ >= kRecordsPerYield) {
      packed_since_yield_ = 0;
      OfferCpu();
    }
  }
  return {};
}

Status<void> Ledger::ExpandPacks(uint64_t records, std::chrono::steady_clock::time_point deadline) {
  // A pack this node cannot decode is left in place and passed over (its error returned at
  // the end), so one damaged pack does not hold back every pack behind it; a SQLite error
  // stops the round (retried on the next).
  uint64_t done = 0;
  Status<void> undecodable;
  while (packs_pending_ > skipped_packs_ && done < records && std::chrono::steady_clock::now() < deadline) {
    const uint64_t skipped = skipped_packs_;
    if (auto ok = ExpandOnePack(); !ok) {
      if (skipped_packs_ == skipped) return ok;
      undecodable = ok;
      continue;
    }
    done += expanding_.size();
  }
  return undecodable;
}

Status<void> Ledger::ExpandOnePack() {
  if (auto ok = db_->Exec("BEGIN IMMEDIATE"); !ok) return ok;
  auto fail = [&](const junction::Error& e) -> Status<void> {
    oldest_pack_.Reset();
    (void)db_->Exec("ROLLBACK");
    return std::unexpected(e);
  };
  oldest_pack_.Bind(1, expand_after_id_);
  auto row = oldest_pack_.Step();
  if (!row) return fail(row.error());
  if (!*row) {  // none left but those passed over (the count was stale)
    oldest_pack_.Reset();
    packs_pending_ = skipped_packs_;
    return db_->Exec("COMMIT");
  }
  const int64_t id = oldest_pack_.ColumnInt64(0);
  const std::string function = oldest_pack_.ColumnText(1);
  const std::string ns = oldest_pack_.ColumnText(2);
  const auto sources = SourceSet::FromBits(static_cast<uint8_t>(oldest_pack_.ColumnInt64(3)));
  const int format = static_cast<int>(oldest_pack_.ColumnInt64(4));
  expanding_.clear();
  auto decoded = ForEachPacked(oldest_pack_.ColumnBlob(5), format, function, ns, sources,
                               [&](uint64_t seq, const InvocationRecord& r) {
                                 expanding_.push_back(r);
                                 expanding_.back().seq = seq;
                               });
  if (!decoded) {
    expand_after_id_ = id;
    ++skipped_packs_;
    return fail(junction::Error(decoded.error().code(),
                                fmt::format("ledger {} pack {}: {}", options_.path, id, decoded.error().message())));
  }
  oldest_pack_.Reset();
  if (auto ok = InsertInvocations(expanding_); !ok) return fail(ok.error());
  delete_pack_.Bind(1, id);
  if (auto ok = delete_pack_.Run(); !ok) return fail(ok.error());
  if (auto ok = db_->Exec("COMMIT"); !ok) return fail(ok.error());
  --packs_pending_;
  std::lock_guard lock(mu_);
  stats_.records_expanded += expanding_.size();
  stats_.rows_written += expanding_.size();
  return {};
}

Status<void> Ledger::WriteBatchRows() {
  if (auto ok = db_->Exec("BEGIN IMMEDIATE"); !ok) return ok;
  auto fail = [&](const junction::Error& e) -> Status<void> {
    (void)db_->Exec("ROLLBACK");
    return std::unexpected(e);
  };
  if (auto ok = InsertInvocations(batch_); !ok) return fail(ok.error());
  if (auto ok = InsertPacks(); !ok) return fail(ok.error());
  SqliteStatement& is = insert_interval_;
  for (const IntervalRecord& r : interval_batch_) {
    is.Bind(1, r.begin_ns);
    is.Bind(2, r.end_ns);
    is.BindStaticText(3, r.meter.sources.Name());
    BindZones(is, 4, r.meter);
    is.Bind(10, r.meter.NodeTotal().value);
    is.Bind(11, r.invocations_j);
    is.Bind(12, r.idle_j);
    is.Bind(13, r.overhead_j);
    is.Bind(14, r.unaccounted_j);
    is.Bind(15, static_cast<int64_t>(r.accounts));
    is.Bind(16, static_cast<int64_t>(r.merged));
    if (r.priced) {
      is.Bind(17, r.intensity_g_per_kwh);
      is.Bind(18, r.meter_grams);
      is.Bind(19, r.invocations_grams);
      is.Bind(20, r.idle_grams);
      is.Bind(21, r.overhead_grams);
      is.Bind(22, r.unaccounted_grams);
    } else {
      for (int i = 17; i <= 22; ++i) is.BindNull(i);
    }
    if (auto ok = is.Run(); !ok) return fail(ok.error());
  }
  SqliteStatement& as = insert_aggregate_;
  const int64_t now = RealtimeNs();
  for (const Aggregate& a : aggregate_batch_) {
    as.Bind(1, now);
    as.BindText(2, a.function.view());
    as.BindText(3, a.ns.view());
    as.Bind(4, static_cast<int64_t>(a.records));
    as.Bind(5, static_cast<int64_t>(a.min_seq));
    as.Bind(6, static_cast<int64_t>(a.max_seq));
    as.Bind(7, a.first_start_ns);
    as.Bind(8, a.last_end_ns);
    as.Bind(9, a.wall_ns);
    as.Bind(10, static_cast<int64_t>(a.cycles));
    BindZones(as, 11, a.joules);
    as.Bind(17, a.joules.NodeTotal().value);
    as.BindStaticText(18, a.joules.sources.Name());
    as.Bind(19, a.grams);
    as.Bind(20, a.embodied_grams);
    as.Bind(21, static_cast<int64_t>(a.errors));
    as.Bind(22, static_cast<int64_t>(a.bytes_in));
    as.Bind(23, static_cast<int64_t>(a.bytes_out));
    if (auto ok = as.Run(); !ok) return fail(ok.error());
  }
  if (auto ok = db_->Exec("COMMIT"); !ok) return fail(ok.error());
  return {};
}

}  // namespace energy
