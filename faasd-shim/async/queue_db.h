// queue_db.h — the async queue's SQLite table: one row per accepted /async-function request.
//
// Its own database file (default <state dir>/async.db), WAL journal, synchronous=FULL: a
// commit returns only once the WAL is fsync'd, so a row Insert() returned is on disk. A row is
// `done` only once its callback succeeded, its attempts ran out, or it had no callback and the
// function ran; every other row is run again after a restart (at least once).
//
// Threads: one thread at a time (the queue's writer thread). Blocking: every call does file
// I/O, and commits fsync. Never call it on a runtime core.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "energy/ledger/sqlite.h"
#include "junction/base/error.h"

namespace faasnode::async {

using HeaderPairs = std::vector<std::pair<std::string, std::string>>;

// What the function answered, kept so that callback retries do not run it again.
struct CallResult {
  int status = 0;
  HeaderPairs headers;
  std::string body;
  double seconds = 0;
};

struct QueuedCall {
  std::int64_t id = 0;  // the row id, set by Insert
  std::string call_id;
  std::string function;  // NAME[.NS] as the request named it
  std::string path;      // after /async-function/NAME: "" or "/rest"
  std::string query;
  HeaderPairs headers;
  std::string body;
  std::string callback_url;  // "" when none
  std::int64_t enqueued_ns = 0;
  int attempts = 0;  // callback attempts made so far
  std::optional<CallResult> result;
};

class QueueDb {
 public:
  // Creates the file (and its directory, mode 0700) and the table when absent. Errors: kIo
  // naming the path and SQLite's reason.
  static junction::Status<std::unique_ptr<QueueDb>> Open(const std::string& path);

  // Inserts every call in one transaction (one fsync) and sets their ids. On error nothing
  // was inserted.
  junction::Status<void> Insert(std::vector<QueuedCall*>& calls);
  // Every row not done, oldest first.
  junction::Status<std::vector<QueuedCall>> LoadPending();
  junction::Status<void> SaveResult(std::int64_t id, const CallResult& result);
  junction::Status<void> SaveAttempts(std::int64_t id, int attempts);
  // Marks a row done with a one-line outcome ("callback answered 200", ...).
  junction::Status<void> MarkDone(std::int64_t id, std::string_view outcome);
  junction::Status<std::int64_t> CountPending();
  // Deletes done rows but the newest `keep` of them (their outcomes are kept for inspection
  // with sqlite3). Rows not done are never touched.
  junction::Status<void> PruneDone(std::int64_t keep);
  junction::Status<std::int64_t> CountAll();

  // Several updates in one transaction (one fsync): Begin, the updates, Commit.
  junction::Status<void> Begin() { return db_.Exec("BEGIN IMMEDIATE"); }
  junction::Status<void> Commit() { return db_.Exec("COMMIT"); }
  void Rollback() { (void)db_.Exec("ROLLBACK"); }

 private:
  explicit QueueDb(energy::SqliteDb db) : db_(std::move(db)) {}
  energy::SqliteDb db_;
};

// Header lists as one string ("name\0value\0..."), the form they are stored in.
std::string EncodeHeaders(const HeaderPairs& headers);
HeaderPairs DecodeHeaders(std::string_view encoded);

}  // namespace faasnode::async
