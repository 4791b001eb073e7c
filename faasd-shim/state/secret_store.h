// secret_store.h — secret values as files under the state dir, indexed in the StateDb.
//
//   STATE/secrets/NS/NAME                 the value, mode 0600 (written whole, then renamed)
//   STATE/functions/NS/FN/secrets/NAME    the copies one deployment reads (mode 0600), made at
//                                         deploy or update time: the directory a function is
//                                         given in its env (FAASNODE_SECRETS_DIR)
//
// A secret updated later reaches a function at its next deploy or update (as a file
// bind-mounted into a faasd container keeps the inode it was given).
//
// Names: 1..253 bytes, no '/', no "..", no NUL, not "." (the API layer also applies the
// OpenFaaS name rule). Threads: any thread or uthread; blocks the kthread on file I/O.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "faasd-shim/state/state_db.h"
#include "junction/base/error.h"

namespace faasnode::state {

class SecretStore {
 public:
  explicit SecretStore(StateDb* db) : db_(db) {}

  // The error says what is wrong with `name` (kInvalidArgument): directory traversal and the like.
  [[nodiscard]] static junction::Status<void> ValidateName(std::string_view name);

  // Creates or overwrites NS/NAME with `value`, durably (file fsynced, renamed, index committed).
  junction::Status<void> Put(const std::string& ns, const std::string& name, std::string_view value);
  // Errors: kNotFound when the secret does not exist.
  junction::Status<void> Remove(const std::string& ns, const std::string& name);
  junction::Status<std::vector<std::string>> List(const std::string& ns);
  bool Exists(const std::string& ns, const std::string& name) const;
  // Errors: kNotFound; kIo.
  junction::Status<std::string> Value(const std::string& ns, const std::string& name) const;

  // Copies the named secrets of NS into the directory of deployment FN (replacing what was
  // there) and returns that directory and the (name, value) pairs, for the function's env and
  // its SDK. Errors: kNotFound naming the first missing secret ("unable to find secret: X").
  struct Materialized {
    std::string dir;
    std::vector<std::pair<std::string, std::string>> values;
  };
  // Where the copies go and who owns them: by default STATE/functions/NS/FN/secrets, owned by
  // the node. Exec children run as another user and cannot enter the state dir (0700): for
  // them the copies go to ROOT/NS.FN (ROOT and its parent made 0711: enterable, not listable),
  // owned by that user, directory 0500 and files 0400.
  struct CopyOptions {
    std::string root;  // "" : the state dir layout above
    bool chown = false;
    uid_t uid = 0;
    gid_t gid = 0;
  };
  junction::Status<Materialized> Materialize(const std::string& ns, const std::string& function,
                                             const std::vector<std::string>& names, const CopyOptions& copy);
  junction::Status<Materialized> Materialize(const std::string& ns, const std::string& function,
                                             const std::vector<std::string>& names) {
    return Materialize(ns, function, names, CopyOptions());
  }
  // Removes the deployment's copies (when it is deleted), in the state dir and under `root`
  // when given. Never fails loudly.
  void Forget(const std::string& ns, const std::string& function, const std::string& root = "");

  std::string PathOf(const std::string& ns, const std::string& name) const;

 private:
  StateDb* db_;
};

}  // namespace faasnode::state
