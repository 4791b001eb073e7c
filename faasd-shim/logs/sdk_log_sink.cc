// sdk_log_sink.cc — SDK log lines into the LogStore.
#include "faasd-shim/logs/sdk_log_sink.h"

#include <unistd.h>

namespace faasnode::logs {

store::LogSink MakeSdkLogSink(LogStore* store, std::string name, std::string ns) {
  return [store, name = std::move(name), ns = std::move(ns), instance = std::to_string(getpid())](
             const store::LogRecord& r) {
    if (r.level == store::LogLevel::kDebug) return;
    store->Append(name, ns, instance, r.message);
  };
}

}  // namespace faasnode::logs
