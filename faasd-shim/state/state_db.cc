// state_db.cc — the state database: schema, migrations, durable reads and writes.
#include "faasd-shim/state/state_db.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace faasnode::state {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS functions (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  created_ns INTEGER NOT NULL,
  PRIMARY KEY (namespace, name));
CREATE TABLE IF NOT EXISTS namespaces (
  name TEXT PRIMARY KEY,
  labels TEXT NOT NULL,
  annotations TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS secrets (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (namespace, name));
)sql";

Status<void> MakeDirs(const std::string& dir) {
  std::string partial;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      partial = dir.substr(0, i);
      if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
        return std::unexpected(junction::Error::FromErrno(
            fmt::format("cannot create the state directory {} (at {}); make it writable or set "
                        "[state] dir", dir, partial)));
      }
    }
  }
  return {};
}

}  // namespace

Status<std::unique_ptr<StateDb>> StateDb::Open(const std::string& dir) {
  if (dir.empty()) return MakeError(ErrorCode::kInvalidArgument, "state dir is empty; set [state] dir");
  if (auto m = MakeDirs(dir); !m) return std::unexpected(m.error());
  const std::string path = dir + "/state.db";
  // Created 0600 before SQLite opens it (its -wal and -shm files take the same mode).
  if (int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); fd >= 0) close(fd);
  auto db = energy::SqliteDb::Open(path, {});
  if (!db) return std::unexpected(db.error());
  if (auto s = db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"); !s) {
    return MakeError(ErrorCode::kIo, fmt::format("state db {}: {}", path, s.error().message()));
  }
  auto version = db->QueryInt64("PRAGMA user_version");
  if (!version) {
    return MakeError(ErrorCode::kIo, fmt::format("state db {} is not readable as SQLite: {}; move it "
                                                 "away or point [state] dir elsewhere",
                                                 path, version.error().message()));
  }
  if (*version > kSchemaVersion) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("state db {} has schema version {}, newer than this faasnode's {}; "
                                 "run a newer faasnode or use another state dir",
                                 path, *version, kSchemaVersion));
  }
  const bool created = *version == 0;
  if (created) {
    std::string sql = "BEGIN IMMEDIATE;";
    sql += kSchemaV1;
    sql += fmt::format("PRAGMA user_version = {}; COMMIT;", kSchemaVersion);
    if (auto s = db->Exec(sql); !s) {
      (void)db->Exec("ROLLBACK");
      return MakeError(ErrorCode::kIo, fmt::format("state db {}: creating the schema: {}", path, s.error().message()));
    }
  }
  chmod(path.c_str(), 0600);
  return std::unique_ptr<StateDb>(new StateDb(dir, path, std::move(*db), created));
}

Status<void> StateDb::Transaction(const std::function<Status<void>(energy::SqliteDb&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto b = db_.Exec("BEGIN IMMEDIATE"); !b) return b;
  auto r = fn(db_);
  if (!r) {
    (void)db_.Exec("ROLLBACK");
    return r;
  }
  if (auto c = db_.Exec("COMMIT"); !c) {
    (void)db_.Exec("ROLLBACK");
    return c;
  }
  return {};
}

Status<void> StateDb::Read(const std::function<Status<void>(energy::SqliteDb&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  return fn(db_);
}

namespace {

// Runs a statement with text parameters; returns the number of rows changed.
Status<int> RunText(energy::SqliteDb& db, std::string_view sql, std::initializer_list<std::string_view> args,
                    std::optional<std::int64_t> tail_int = std::nullopt) {
  auto st = db.Prepare(sql);
  if (!st) return std::unexpected(st.error());
  int i = 1;
  for (std::string_view a : args) st->BindText(i++, a);
  if (tail_int) st->Bind(i, *tail_int);
  if (auto r = st->Run(); !r) return std::unexpected(r.error());
  return sqlite3_changes(db.raw());
}

}  // namespace

Status<void> StateDb::PutFunction(const FunctionRecord& r) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "INSERT OR REPLACE INTO functions (namespace, name, spec, created_ns) VALUES (?, ?, ?, ?)",
                     {r.ns, r.name, r.spec_json}, r.created_ns);
    if (!n) return std::unexpected(n.error());
    return {};
  });
}

Status<void> StateDb::DeleteFunction(const std::string& ns, const std::string& name) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "DELETE FROM functions WHERE namespace = ? AND name = ?", {ns, name});
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return MakeError(ErrorCode::kNotFound, fmt::format("function {}.{} not found", name, ns));
    return {};
  });
}

Status<std::vector<FunctionRecord>> StateDb::Functions() {
  std::vector<FunctionRecord> out;
  auto r = Read([&](energy::SqliteDb& db) -> Status<void> {
    auto st = db.Prepare("SELECT namespace, name, spec, created_ns FROM functions ORDER BY namespace, name");
    if (!st) return std::unexpected(st.error());
    while (true) {
      auto row = st->Step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      out.push_back({st->ColumnText(0), st->ColumnText(1), st->ColumnText(2), st->ColumnInt64(3)});
    }
    return {};
  });
  if (!r) return std::unexpected(r.error());
  return out;
}

Status<void> StateDb::PutNamespace(const NamespaceRecord& r) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "INSERT OR REPLACE INTO namespaces (name, labels, annotations) VALUES (?, ?, ?)",
                     {r.name, r.labels_json, r.annotations_json});
    if (!n) return std::unexpected(n.error());
    return {};
  });
}

Status<void> StateDb::DeleteNamespace(const std::string& name) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "DELETE FROM namespaces WHERE name = ?", {name});
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return MakeError(ErrorCode::kNotFound, fmt::format("namespace {} not found", name));
    return {};
  });
}

Status<std::vector<NamespaceRecord>> StateDb::Namespaces() {
  std::vector<NamespaceRecord> out;
  auto r = Read([&](energy::SqliteDb& db) -> Status<void> {
    auto st = db.Prepare("SELECT name, labels, annotations FROM namespaces ORDER BY name");
    if (!st) return std::unexpected(st.error());
    while (true) {
      auto row = st->Step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      out.push_back({st->ColumnText(0), st->ColumnText(1), st->ColumnText(2)});
    }
    return {};
  });
  if (!r) return std::unexpected(r.error());
  return out;
}

Status<void> StateDb::SetMeta(const std::string& key, const std::string& value) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", {key, value});
    if (!n) return std::unexpected(n.error());
    return {};
  });
}

Status<std::optional<std::string>> StateDb::GetMeta(const std::string& key) {
  std::optional<std::string> out;
  auto r = Read([&](energy::SqliteDb& db) -> Status<void> {
    auto st = db.Prepare("SELECT value FROM meta WHERE key = ?");
    if (!st) return std::unexpected(st.error());
    st->BindText(1, key);
    auto row = st->Step();
    if (!row) return std::unexpected(row.error());
    if (*row) out = st->ColumnText(0);
    return {};
  });
  if (!r) return std::unexpected(r.error());
  return out;
}

Status<void> StateDb::PutSecret(const std::string& ns, const std::string& name) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "INSERT OR IGNORE INTO secrets (namespace, name) VALUES (?, ?)", {ns, name});
    if (!n) return std::unexpected(n.error());
    return {};
  });
}

Status<void> StateDb::DeleteSecret(const std::string& ns, const std::string& name) {
  return Transaction([&](energy::SqliteDb& db) -> Status<void> {
    auto n = RunText(db, "DELETE FROM secrets WHERE namespace = ? AND name = ?", {ns, name});
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return MakeError(ErrorCode::kNotFound, fmt::format("secret {} not found in namespace {}", name, ns));
    return {};
  });
}

Status<std::vector<std::string>> StateDb::Secrets(const std::string& ns) {
  std::vector<std::string> out;
  auto r = Read([&](energy::SqliteDb& db) -> Status<void> {
    auto st = db.Prepare("SELECT name FROM secrets WHERE namespace = ? ORDER BY name");
    if (!st) return std::unexpected(st.error());
    st->BindText(1, ns);
    while (true) {
      auto row = st->Step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      out.push_back(st->ColumnText(0));
    }
    return {};
  });
  if (!r) return std::unexpected(r.error());
  return out;
}

}  // namespace faasnode::state
