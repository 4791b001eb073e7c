// queue_db.cc — the async queue's table.
#include "faasd-shim/async/queue_db.h"

#include <fmt/format.h>

#include <filesystem>

namespace faasnode::async {

using junction::ErrorCode;
using junction::MakeError;

std::string EncodeHeaders(const HeaderPairs& headers) {
  std::string out;
  for (const auto& [k, v] : headers) {
    out += k;
    out += '\0';
    out += v;
    out += '\0';
  }
  return out;
}

HeaderPairs DecodeHeaders(std::string_view s) {
  HeaderPairs out;
  while (!s.empty()) {
    const std::size_t a = s.find('\0');
    if (a == std::string_view::npos) break;
    const std::size_t b = s.find('\0', a + 1);
    if (b == std::string_view::npos) break;
    out.emplace_back(std::string(s.substr(0, a)), std::string(s.substr(a + 1, b - a - 1)));
    s.remove_prefix(b + 1);
  }
  return out;
}

junction::Status<std::unique_ptr<QueueDb>> QueueDb::Open(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    if (std::filesystem::create_directories(dir, ec); ec) {
      return MakeError(ErrorCode::kIo, fmt::format("async queue: cannot create {}: {}", dir.string(), ec.message()));
    }
    if (std::filesystem::exists(dir)) {
      std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    }
  }
  auto db = energy::SqliteDb::Open(path, {});
  if (!db) return MakeError(ErrorCode::kIo, fmt::format("async queue {}: {}", path, db.error().message()));
  auto schema = db->Exec(R"sql(
    PRAGMA journal_mode=WAL;
    PRAGMA synchronous=FULL;
    CREATE TABLE IF NOT EXISTS async_calls(
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      call_id TEXT NOT NULL,
      function TEXT NOT NULL,
      path TEXT NOT NULL,
      query TEXT NOT NULL,
      headers BLOB NOT NULL,
      body BLOB NOT NULL,
      callback_url TEXT NOT NULL,
      enqueued_ns INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      done INTEGER NOT NULL DEFAULT 0,
      result_status INTEGER,
      result_headers BLOB,
      result_body BLOB,
      result_seconds REAL,
      outcome TEXT,
      done_ns INTEGER);
    CREATE INDEX IF NOT EXISTS async_calls_pending ON async_calls(done, id);
  )sql");
  if (!schema) return MakeError(ErrorCode::kIo, fmt::format("async queue {}: {}", path, schema.error().message()));
  // WAL must really be on: a database on a file system without shared memory stays in
  // rollback mode, which is still durable with synchronous=FULL but say so.
  auto mode = db->QueryText("PRAGMA journal_mode");
  if (!mode || *mode != "wal") {
    return MakeError(ErrorCode::kIo, fmt::format("async queue {}: SQLite refused WAL mode (journal_mode={}); put "
                                                 "the state dir on a local file system",
                                                 path, mode ? *mode : mode.error().message()));
  }
  return std::unique_ptr<QueueDb>(new QueueDb(std::move(*db)));
}

junction::Status<void> QueueDb::Insert(std::vector<QueuedCall*>& calls) {
  if (calls.empty()) return {};
  if (auto b = Begin(); !b) return b;
  auto st = db_.Prepare(
      "INSERT INTO async_calls(call_id, function, path, query, headers, body, callback_url, enqueued_ns) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!st) {
    Rollback();
    return std::unexpected(st.error());
  }
  for (QueuedCall* c : calls) {
    st->BindText(1, c->call_id);
    st->BindText(2, c->function);
    st->BindText(3, c->path);
    st->BindText(4, c->query);
    st->BindText(5, EncodeHeaders(c->headers));
    st->BindText(6, c->body);
    st->BindText(7, c->callback_url);
    st->Bind(8, static_cast<int64_t>(c->enqueued_ns));
    if (auto r = st->Run(); !r) {
      Rollback();
      return r;
    }
    c->id = sqlite3_last_insert_rowid(db_.raw());
  }
  if (auto r = Commit(); !r) {
    Rollback();
    return r;
  }
  return {};
}

junction::Status<std::vector<QueuedCall>> QueueDb::LoadPending() {
  auto st = db_.Prepare(
      "SELECT id, call_id, function, path, query, headers, body, callback_url, enqueued_ns, attempts, "
      "result_status, result_headers, result_body, result_seconds FROM async_calls WHERE done = 0 ORDER BY id");
  if (!st) return std::unexpected(st.error());
  std::vector<QueuedCall> out;
  while (true) {
    auto row = st->Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    QueuedCall& c = out.emplace_back();
    c.id = st->ColumnInt64(0);
    c.call_id = st->ColumnText(1);
    c.function = st->ColumnText(2);
    c.path = st->ColumnText(3);
    c.query = st->ColumnText(4);
    c.headers = DecodeHeaders(st->ColumnText(5));
    c.body = st->ColumnText(6);
    c.callback_url = st->ColumnText(7);
    c.enqueued_ns = st->ColumnInt64(8);
    c.attempts = static_cast<int>(st->ColumnInt64(9));
    if (!st->ColumnIsNull(10)) {
      c.result = CallResult{.status = static_cast<int>(st->ColumnInt64(10)),
                            .headers = DecodeHeaders(st->ColumnText(11)),
                            .body = st->ColumnText(12),
                            .seconds = st->ColumnDouble(13)};
    }
  }
  return out;
}

junction::Status<void> QueueDb::SaveResult(std::int64_t id, const CallResult& r) {
  auto st = db_.Prepare(
      "UPDATE async_calls SET result_status = ?1, result_headers = ?2, result_body = ?3, result_seconds = ?4 "
      "WHERE id = ?5");
  if (!st) return std::unexpected(st.error());
  st->Bind(1, static_cast<int64_t>(r.status));
  st->BindText(2, EncodeHeaders(r.headers));
  st->BindText(3, r.body);
  st->Bind(4, r.seconds);
  st->Bind(5, static_cast<int64_t>(id));
  return st->Run();
}

junction::Status<void> QueueDb::SaveAttempts(std::int64_t id, int attempts) {
  auto st = db_.Prepare("UPDATE async_calls SET attempts = ?1 WHERE id = ?2");
  if (!st) return std::unexpected(st.error());
  st->Bind(1, static_cast<int64_t>(attempts));
  st->Bind(2, static_cast<int64_t>(id));
  return st->Run();
}

junction::Status<void> QueueDb::MarkDone(std::int64_t id, std::string_view outcome) {
  auto st = db_.Prepare(
      "UPDATE async_calls SET done = 1, outcome = ?1, done_ns = CAST((julianday('now') - 2440587.5) * 86400e9 AS "
      "INTEGER), headers = '', body = '', result_body = NULL WHERE id = ?2");
  if (!st) return std::unexpected(st.error());
  st->BindText(1, outcome);
  st->Bind(2, static_cast<int64_t>(id));
  return st->Run();
}

junction::Status<std::int64_t> QueueDb::CountPending() {
  return db_.QueryInt64("SELECT count(*) FROM async_calls WHERE done = 0");
}

junction::Status<void> QueueDb::PruneDone(std::int64_t keep) {
  auto st = db_.Prepare(
      "DELETE FROM async_calls WHERE done = 1 AND id NOT IN "
      "(SELECT id FROM async_calls WHERE done = 1 ORDER BY id DESC LIMIT ?1)");
  if (!st) return std::unexpected(st.error());
  st->Bind(1, static_cast<int64_t>(keep));
  return st->Run();
}

junction::Status<std::int64_t> QueueDb::CountAll() { return db_.QueryInt64("SELECT count(*) FROM async_calls"); }

}  // namespace faasnode::async
