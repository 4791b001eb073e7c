// log_sink.h — where an exec function's log lines go: the child's stderr, and the watchdog's own
// lines ("Forking fprocess.", "Wrote N Bytes - Duration: S seconds").
//
// Plug an implementation into ExecSpec::log (e.g. a /system/logs ring). Line() is called on the
// invoking uthread, synchronously, once per complete line (a last line without a newline is
// flushed when the child's stderr closes); `text` has no trailing newline and is a view valid
// for the call only. It must not block: copy the line into a queue and return.
// Threads: called from uthreads on any core at once; implementations synchronise themselves.
#pragma once

#include <string_view>

namespace faasnode::exec {

enum class LogStream {
  kStderr,    // a line the child wrote to its stderr
  kWatchdog,  // a line of the watchdog itself, as the classic watchdog prints them
};

class LogSink {
 public:
  virtual ~LogSink() = default;
  // `function`: the deployment's name; `instance`: the pool instance that ran the child
  // ("NAME-1", ...).
  virtual void Line(std::string_view function, std::string_view instance, LogStream stream,
                    std::string_view text) = 0;
};

}  // namespace faasnode::exec
