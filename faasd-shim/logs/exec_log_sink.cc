// exec_log_sink.cc — exec::LogSink over the LogStore.
#include "faasd-shim/logs/exec_log_sink.h"

namespace faasnode::logs {
namespace {

class ExecLogSink final : public exec::LogSink {
 public:
  ExecLogSink(LogStore* store, std::string ns) : store_(store), ns_(std::move(ns)) {}
  void Line(std::string_view function, std::string_view instance, exec::LogStream, std::string_view text) override {
    store_->Append(function, ns_, instance, text);
  }

 private:
  LogStore* store_;
  std::string ns_;
};

}  // namespace

std::shared_ptr<exec::LogSink> MakeExecLogSink(LogStore* store, std::string ns) {
  return std::make_shared<ExecLogSink>(store, std::move(ns));
}

}  // namespace faasnode::logs
