// state_db.h — the node's durable control-plane state: one SQLite database in the state dir.
//
//   auto db = state::StateDb::Open("faasnode-state");           // creates dir and schema
//   db->PutFunction({.ns = "openfaas-fn", .name = "echo", .spec_json = ..., .created_ns = ...});
//   auto all = db->Functions();                                   // every record, sorted
//
// What it holds (schema version kSchemaVersion, in PRAGMA user_version): deployments
// (namespace, name, the deployment as JSON, created time), namespaces (name, labels and
// annotations as JSON) and the secrets index (namespace, name; the values are files that
// state/secret_store.h writes). Other parts of the node keep their own tables in the same
// database through Transaction() (CREATE TABLE IF NOT EXISTS ...).
//
// Durability: WAL with synchronous=FULL, so a call that returned success survives a kill -9
// or a power cut; answer a client only after it returns.
//
// Threads: every method may be called from any thread or uthread; calls are serialised by a
// std::mutex and block the calling kthread for the SQLite call (a commit is an fsync, about a
// millisecond): the control plane only, never the invocation path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "energy/ledger/sqlite.h"
#include "junction/base/error.h"

namespace faasnode::state {

inline constexpr int kSchemaVersion = 1;

struct FunctionRecord {
  std::string ns;
  std::string name;
  std::string spec_json;   // state::FunctionSpec as ToStoredJson writes it
  std::int64_t created_ns = 0;  // unix ns
};

struct NamespaceRecord {
  std::string name;
  std::string labels_json = "{}";
  std::string annotations_json = "{}";
};

class StateDb {
 public:
  // Opens (creating when absent, mode 0700) `dir` and `dir`/state.db. Errors: kIo naming the
  // path (the directory cannot be made, the file is not a database); kInvalidArgument when the
  // database was written by a newer faasnode (its schema version is higher than ours).
  [[nodiscard]] static junction::Status<std::unique_ptr<StateDb>> Open(const std::string& dir);

  // True when this Open created the schema (the node's first start with this state dir).
  bool created() const { return created_; }
  const std::string& dir() const { return dir_; }
  const std::string& path() const { return path_; }

  // Runs `fn` between BEGIN IMMEDIATE and COMMIT, holding the handle's lock; when `fn` fails
  // (or the commit does) the transaction is rolled back and nothing changes. `fn` must not
  // call back into this StateDb. Durable on success.
  junction::Status<void> Transaction(const std::function<junction::Status<void>(energy::SqliteDb&)>& fn);
  // Runs `fn` holding the lock, outside a transaction (reads).
  junction::Status<void> Read(const std::function<junction::Status<void>(energy::SqliteDb&)>& fn);

  // Deployments. Put inserts or replaces by (ns, name).
  junction::Status<void> PutFunction(const FunctionRecord& record);
  // Errors: kNotFound when there is no such record.
  junction::Status<void> DeleteFunction(const std::string& ns, const std::string& name);
  // Sorted by namespace, then name.
  junction::Status<std::vector<FunctionRecord>> Functions();

  junction::Status<void> PutNamespace(const NamespaceRecord& record);
  junction::Status<void> DeleteNamespace(const std::string& name);  // kNotFound when absent
  junction::Status<std::vector<NamespaceRecord>> Namespaces();      // sorted by name

  // Small named values of the node (e.g. "seeded": the config's functions were deployed once).
  junction::Status<void> SetMeta(const std::string& key, const std::string& value);
  junction::Status<std::optional<std::string>> GetMeta(const std::string& key);

  // The secrets index.
  junction::Status<void> PutSecret(const std::string& ns, const std::string& name);
  junction::Status<void> DeleteSecret(const std::string& ns, const std::string& name);  // kNotFound
  junction::Status<std::vector<std::string>> Secrets(const std::string& ns);  // names, sorted

 private:
  StateDb(std::string dir, std::string path, energy::SqliteDb db, bool created)
      : dir_(std::move(dir)), path_(std::move(path)), db_(std::move(db)), created_(created) {}

  const std::string dir_;
  const std::string path_;
  std::mutex mu_;  // guards db_
  energy::SqliteDb db_;
  const bool created_;
};

}  // namespace faasnode::state
