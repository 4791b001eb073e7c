// secret_store.cc — secret files: atomic writes with 0600, copies per deployment.
#include "faasd-shim/state/secret_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace faasnode::state {

using junction::ErrorCode;
using junction::MakeError;
using junction::Status;

namespace {

Status<void> MkdirP(const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      const std::string p = dir.substr(0, i);
      if (mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) {
        return std::unexpected(junction::Error::FromErrno("cannot create " + p));
      }
    }
  }
  return {};
}

// Writes `value` to `path` via a temporary file, fsync and rename: a reader sees the old or
// the new value, never a torn one.
Status<void> WriteFileAtomic(const std::string& path, std::string_view value) {
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return std::unexpected(junction::Error::FromErrno("cannot write " + tmp));
  fchmod(fd, 0600);
  std::size_t off = 0;
  while (off < value.size()) {
    ssize_t n = write(fd, value.data() + off, value.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto e = junction::Error::FromErrno("cannot write " + tmp);
      close(fd);
      unlink(tmp.c_str());
      return std::unexpected(e);
    }
    off += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) {
    auto e = junction::Error::FromErrno("cannot fsync " + tmp);
    close(fd);
    unlink(tmp.c_str());
    return std::unexpected(e);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    auto e = junction::Error::FromErrno("cannot rename " + tmp);
    unlink(tmp.c_str());
    return std::unexpected(e);
  }
  const std::string parent = path.substr(0, path.rfind('/'));
  if (int dfd = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return {};
}

Status<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return MakeError(ErrorCode::kNotFound, path + " does not exist");
    return std::unexpected(junction::Error::FromErrno("cannot read " + path));
  }
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto e = junction::Error::FromErrno("cannot read " + path);
      close(fd);
      return std::unexpected(e);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

void RemoveTree(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    const std::string p = dir + "/" + n;
    struct stat st;
    if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      RemoveTree(p);
    } else {
      unlink(p.c_str());
    }
  }
  closedir(d);
  rmdir(dir.c_str());
}

}  // namespace

Status<void> SecretStore::ValidateName(std::string_view name) {
  if (name.empty()) return MakeError(ErrorCode::kInvalidArgument, "non-empty name is required");
  if (name.find('/') != std::string_view::npos || name.find("..") != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "directory traversal found in name");
  }
  if (name == "." || name.find('\0') != std::string_view::npos || name.size() > 253) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("secret name '{}' is not valid: use 1..253 of a-z, A-Z, 0-9, '-', '_', '.'", name));
  }
  return {};
}

std::string SecretStore::PathOf(const std::string& ns, const std::string& name) const {
  return db_->dir() + "/secrets/" + ns + "/" + name;
}

Status<void> SecretStore::Put(const std::string& ns, const std::string& name, std::string_view value) {
  if (auto v = ValidateName(name); !v) return v;
  if (auto v = ValidateName(ns); !v) return v;
  if (auto m = MkdirP(db_->dir() + "/secrets/" + ns); !m) return m;
  if (auto w = WriteFileAtomic(PathOf(ns, name), value); !w) return w;
  return db_->PutSecret(ns, name);
}

Status<void> SecretStore::Remove(const std::string& ns, const std::string& name) {
  if (auto v = ValidateName(name); !v) return v;
  if (auto d = db_->DeleteSecret(ns, name); !d) return d;
  unlink(PathOf(ns, name).c_str());
  return {};
}

Status<std::vector<std::string>> SecretStore::List(const std::string& ns) { return db_->Secrets(ns); }

bool SecretStore::Exists(const std::string& ns, const std::string& name) const {
  if (!ValidateName(name) || !ValidateName(ns)) return false;
  return access(PathOf(ns, name).c_str(), R_OK) == 0;
}

Status<std::string> SecretStore::Value(const std::string& ns, const std::string& name) const {
  if (auto v = ValidateName(name); !v) return std::unexpected(v.error());
  return ReadFile(PathOf(ns, name));
}

Status<SecretStore::Materialized> SecretStore::Materialize(const std::string& ns, const std::string& function,
                                                           const std::vector<std::string>& names,
                                                           const CopyOptions& copy) {
  Materialized out;
  for (const std::string& n : names) {
    auto v = Value(ns, n);
    if (!v) return MakeError(ErrorCode::kNotFound, "unable to find secret: " + n);
    out.values.emplace_back(n, std::move(*v));
  }
  if (copy.root.empty()) {
    out.dir = db_->dir() + "/functions/" + ns + "/" + function + "/secrets";
    RemoveTree(out.dir);
    if (auto m = MkdirP(out.dir); !m) return std::unexpected(m.error());
  } else {
    const std::string parent = copy.root.substr(0, copy.root.rfind('/'));
    for (const std::string& d : {parent, copy.root}) {
      if (d.empty()) continue;
      if (mkdir(d.c_str(), 0711) != 0 && errno != EEXIST) {
        return std::unexpected(junction::Error::FromErrno("cannot create " + d));
      }
      chmod(d.c_str(), 0711);
    }
    out.dir = copy.root + "/" + ns + "." + function;
    RemoveTree(out.dir);
    if (mkdir(out.dir.c_str(), 0700) != 0) return std::unexpected(junction::Error::FromErrno("cannot create " + out.dir));
  }
  for (const auto& [n, v] : out.values) {
    const std::string path = out.dir + "/" + n;
    if (auto w = WriteFileAtomic(path, v); !w) return std::unexpected(w.error());
    if (copy.chown) {
      if (chown(path.c_str(), copy.uid, copy.gid) != 0 || chmod(path.c_str(), 0400) != 0) {
        return std::unexpected(junction::Error::FromErrno("cannot hand " + path + " to the function's user"));
      }
    }
  }
  if (copy.chown && (chown(out.dir.c_str(), copy.uid, copy.gid) != 0 || chmod(out.dir.c_str(), 0500) != 0)) {
    return std::unexpected(junction::Error::FromErrno("cannot hand " + out.dir + " to the function's user"));
  }
  return out;
}

void SecretStore::Forget(const std::string& ns, const std::string& function, const std::string& root) {
  const std::string fdir = db_->dir() + "/functions/" + ns + "/" + function;
  RemoveTree(fdir);
  if (!root.empty()) RemoveTree(root + "/" + ns + "." + function);
}

}  // namespace faasnode::state
