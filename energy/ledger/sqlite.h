// sqlite.h — move-only RAII over sqlite3 and sqlite3_stmt handles; errors as results.
//
//   auto db = energy::SqliteDb::Open("/var/lib/faasnode/ledger.db", {});
//   auto st = db->Prepare("SELECT count(*) FROM invocations");
//   if (auto row = st->Step(); row && *row) int64_t n = st->ColumnInt64(0);
//
// Thread affinity: a handle is used by one thread at a time (the ledger writer, or a reader);
// SQLite is built serialized on Debian, but statements are not meant to be shared.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "junction/base/error.h"

namespace energy {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteStatement&& o) noexcept : stmt_(o.stmt_) { o.stmt_ = nullptr; }
  SqliteStatement& operator=(SqliteStatement&& o) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();  // sqlite3_finalize

  // Parameters are 1-based, as in SQLite. Binding errors surface at Step().
  void Bind(int index, int64_t v) { sqlite3_bind_int64(stmt_, index, v); }
  void Bind(int index, double v) { sqlite3_bind_double(stmt_, index, v); }
  void BindText(int index, std::string_view v) {
    sqlite3_bind_text(stmt_, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  // Binds without a copy: `v` must stay valid and unchanged until the statement is reset or
  // the parameter re-bound (the ledger writer binds from its batch, which outlives the step).
  void BindStaticText(int index, std::string_view v) {
    sqlite3_bind_text(stmt_, index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void BindNull(int index) { sqlite3_bind_null(stmt_, index); }
  // Binds bytes without a copy, as BindStaticText.
  void BindStaticBlob(int index, std::string_view bytes) {
    sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
  }

  // Runs one step: true when a row is available, false when done. Errors: kIo with SQLite's
  // message. Does not reset; call Reset() before re-running.
  junction::Status<bool> Step();
  // Steps to completion, then resets and clears bindings.
  junction::Status<void> Run();
  // Steps to completion and resets, keeping the bindings: for a statement whose every
  // parameter is bound again before each run (clearing them first is wasted work per row).
  junction::Status<void> RunRebound();
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t ColumnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
  bool ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string ColumnText(int col) const;
  // The column's bytes, valid until the next Step() or Reset() of this statement.
  std::string_view ColumnBlob(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    return std::string_view(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }

 private:
  friend class SqliteDb;
  explicit SqliteStatement(sqlite3_stmt* s) : stmt_(s) {}
  sqlite3_stmt* stmt_ = nullptr;
};

struct SqliteOpenOptions {
  bool read_only = false;  // otherwise read-write, created if missing
  int busy_timeout_ms = 5000;
};

class SqliteDb {
 public:
  // Errors: kIo naming the path and SQLite's reason (missing directory, permissions, a file
  // that is not a database).
  static junction::Status<SqliteDb> Open(const std::string& path, const SqliteOpenOptions& options);

  SqliteDb(SqliteDb&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  SqliteDb& operator=(SqliteDb&& o) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();  // sqlite3_close_v2: finalize statements first (declare them after the db)

  // Runs one or more statements with no result rows. Errors: kIo with SQLite's message.
  junction::Status<void> Exec(std::string_view sql);
  junction::Status<SqliteStatement> Prepare(std::string_view sql);
  // The first column of the first row of a query as int64 (0 if no row or NULL).
  junction::Status<int64_t> QueryInt64(std::string_view sql);
  junction::Status<std::string> QueryText(std::string_view sql);

  sqlite3* raw() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace energy
