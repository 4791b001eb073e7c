// sdk_log_sink.h — the SDK logger of a native function, into the node's LogStore.
//
// Native functions run inside the node's process, so their instance is the node's PID (as
// faasd's journal names a container's lines by its PID). Before this sink existed (and where a
// pool is built without it) the SDK's lines went to the node's stderr, one per line.
#pragma once

#include <string>

#include "faasd-shim/logs/log_store.h"
#include "faasd-shim/store/instance.h"

namespace faasnode::logs {

// A sink for InstanceOptions::log of function `name` in namespace `ns`. `store` must outlive
// every instance using the sink. Debug lines are dropped (as spdlog's default level would).
store::LogSink MakeSdkLogSink(LogStore* store, std::string name, std::string ns);

}  // namespace faasnode::logs
