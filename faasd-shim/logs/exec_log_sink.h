// exec_log_sink.h — an exec function's log lines (its children's stderr, the watchdog's
// "Forking fprocess." / "Wrote N Bytes" lines) into the node's LogStore.
#pragma once

#include <memory>
#include <string>

#include "faasd-shim/exec/log_sink.h"
#include "faasd-shim/logs/log_store.h"

namespace faasnode::logs {

// For ExecSpec::log of a deployment in namespace `ns`. `store` must outlive the sink.
std::shared_ptr<exec::LogSink> MakeExecLogSink(LogStore* store, std::string ns);

}  // namespace faasnode::logs
