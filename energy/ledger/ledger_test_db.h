// ledger_test_db.h — a test fixture with a scratch directory for a ledger and read-only queries
// of it, and a child process to kill -9 (shared by ledger_test.cc and pack_test.cc).
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "energy/ledger/sqlite.h"

namespace energy {

class LedgerDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/energy-ledger-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/ledger.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  SqliteDb Db() {
    auto db = SqliteDb::Open(path_, {.read_only = true});
    EXPECT_TRUE(db) << db.error().message();
    return std::move(*db);
  }
  int64_t Query(const std::string& sql) {
    SqliteDb db = Db();
    auto v = db.QueryInt64(sql);
    EXPECT_TRUE(v) << v.error().message();
    return v.value_or(-1);
  }
  double QueryDouble(const std::string& sql) {
    SqliteDb db = Db();
    auto st = db.Prepare(sql);
    EXPECT_TRUE(st);
    auto row = st->Step();
    EXPECT_TRUE(row && *row);
    return st->ColumnDouble(0);
  }

  std::string dir_;
  std::string path_;
};

// Forks a child that runs `body` (never returns); the parent gets its pid and a pipe end on
// which the child writes one byte when it is ready to be killed.
inline pid_t ForkChild(int* ready_fd, const std::function<void(int)>& body) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(3);
  }
  close(fds[1]);
  *ready_fd = fds[0];
  return pid;
}

// True when the child said it is ready (one byte on `fd`); closes `fd`.
inline bool WaitReady(int fd) {
  char c;
  bool ok = read(fd, &c, 1) == 1;
  close(fd);
  return ok;
}

// Kills the child with SIGKILL and reaps it; true when the signal is what ended it.
inline bool KillDashNine(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status);
}

}  // namespace energy
