// sqlite.cc — SqliteDb and SqliteStatement.
#include "energy/ledger/sqlite.h"

#include <fmt/format.h>

namespace energy {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Status<bool> SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  return MakeError(ErrorCode::kIo,
                   fmt::format("sqlite step failed: {} ({}) in '{}'; check the ledger file and "
                               "disk space",
                               sqlite3_errmsg(db), rc, sqlite3_sql(stmt_)));
}

Status<void> SqliteStatement::Run() {
  auto r = RunRebound();
  sqlite3_clear_bindings(stmt_);
  return r;
}

Status<void> SqliteStatement::RunRebound() {
  while (true) {
    auto r = Step();
    if (!r) {
      sqlite3_reset(stmt_);
      return std::unexpected(r.error());
    }
    if (!*r) break;
  }
  sqlite3_reset(stmt_);
  return {};
}

std::string SqliteStatement::ColumnText(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t), n);
}

Status<SqliteDb> SqliteDb::Open(const std::string& path, const SqliteOpenOptions& options) {
  sqlite3* db = nullptr;
  int flags = options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (db != nullptr) sqlite3_close_v2(db);
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot open ledger database {}: {}; check that the directory "
                                 "exists and is writable",
                                 path, why));
  }
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  return SqliteDb(db);
}

SqliteDb& SqliteDb::operator=(SqliteDb&& o) noexcept {
  if (this != &o) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = o.db_;
    o.db_ = nullptr;
  }
  return *this;
}

SqliteDb::~SqliteDb() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status<void> SqliteDb::Exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string why = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return MakeError(ErrorCode::kIo, fmt::format("sqlite '{}' failed: {}; check the ledger file",
                                                 s.substr(0, 80), why));
  }
  return {};
}

Status<SqliteStatement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("sqlite cannot prepare '{}': {}; this is a bug in the ledger "
                                 "schema or an incompatible ledger file",
                                 sql.substr(0, 80), sqlite3_errmsg(db_)));
  }
  return SqliteStatement(stmt);
}

Status<int64_t> SqliteDb::QueryInt64(std::string_view sql) {
  auto st = Prepare(sql);
  if (!st) return std::unexpected(st.error());
  auto row = st->Step();
  if (!row) return std::unexpected(row.error());
  return *row ? st->ColumnInt64(0) : 0;
}

Status<std::string> SqliteDb::QueryText(std::string_view sql) {
  auto st = Prepare(sql);
  if (!st) return std::unexpected(st.error());
  auto row = st->Step();
  if (!row) return std::unexpected(row.error());
  return *row ? st->ColumnText(0) : std::string();
}

}  // namespace energy
