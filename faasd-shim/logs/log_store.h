// log_store.h — the node's function logs: a bounded ring of lines per function, read by
// GET /system/logs.
//
// Lines come from exec children's stdout/stderr and the watchdog's own lines (ExecLogSink),
// and from the SDK's logger of native functions (SdkLogSink). Each keeps name, namespace,
// instance, a timestamp (unix ns, taken at Append) and the text. Retention per function: at
// most `max_lines` lines and `max_bytes` bytes of text; the oldest lines go first. Lines are
// kept in memory only: a restart starts with empty logs.
//
// Threads: Append from any uthread or thread; it takes the function's own spinlock (held for a
// ring edit, never across a switch) and never blocks. Read/WaitForMore from uthreads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "junction/sched/spinlock.h"
#include "junction/sched/tsc.h"

namespace faasnode::logs {

struct LogLine {
  std::uint64_t seq = 0;  // the store's order of arrival, from 1
  std::int64_t unix_ns = 0;
  std::string name;
  std::string ns;
  std::string instance;
  std::string text;
};

struct LogQuery {
  std::string name;
  std::string ns = "openfaas-fn";
  std::string instance;          // "" = every instance
  std::optional<std::int64_t> since_ns;  // only lines at or after
  int tail = -1;                 // > 0: only the last `tail` matching lines; otherwise all
};

struct LogStoreOptions {
  std::size_t max_lines = 1000;        // per function
  std::size_t max_bytes = 1 << 20;     // per function, text bytes
};

class LogStore {
 public:
  explicit LogStore(LogStoreOptions options = {});
  ~LogStore();
  LogStore(const LogStore&) = delete;
  LogStore& operator=(const LogStore&) = delete;

  // Adds one line (a trailing "\n" or "\r\n" is removed; a line longer than max_bytes is cut
  // to it). Never blocks.
  void Append(std::string_view name, std::string_view ns, std::string_view instance, std::string_view text);
  // The same with a given timestamp (tests, replays).
  void AppendAt(std::int64_t unix_ns, std::string_view name, std::string_view ns, std::string_view instance,
                std::string_view text);

  // Lines of q.name in q.ns matching the query with seq > after_seq, oldest first. The tail
  // applies only when after_seq is 0 (the first read of a follow).
  std::vector<LogLine> Read(const LogQuery& q, std::uint64_t after_seq = 0) const;

  // The seq of the newest line of any function (0 when none); changes when lines arrive.
  std::uint64_t last_seq() const { return seq_.load(std::memory_order_acquire); }

  const LogStoreOptions& options() const { return options_; }

 private:
  struct FunctionLog {
    mutable junction::sched::Spinlock lock;
    std::deque<LogLine> lines;
    std::size_t bytes = 0;
  };
  FunctionLog* Find(std::string_view key, bool create);

  LogStoreOptions options_;
  mutable junction::sched::Spinlock map_lock_;
  std::map<std::string, std::unique_ptr<FunctionLog>, std::less<>> functions_;  // "NS/NAME"
  std::atomic<std::uint64_t> seq_{0};
};

// Go's time.Time JSON form (RFC 3339 with nanoseconds, trailing zeros trimmed, UTC "Z").
std::string FormatRfc3339Nano(std::int64_t unix_ns);
// RFC 3339 ("2006-01-02T15:04:05Z07:00", fraction optional), as Go's time.Parse(RFC3339)
// takes it. nullopt when it is not one.
std::optional<std::int64_t> ParseRfc3339(std::string_view text);
// One Message line of /system/logs: {"name","namespace","instance","timestamp","text"} + "\n".
void AppendMessageJson(std::string& out, const LogLine& line);

}  // namespace faasnode::logs
