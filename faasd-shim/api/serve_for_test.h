// serve_for_test.h — test support: serves a handler from a junction HTTP server in a runtime
// of its own (on a background thread), so that a test drives it with curl like a client.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "junction/http/server/server.h"
#include "junction/net/stack.h"
#include "junction/sched/runtime.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"
#include "tests/integration/e2e_util.h"

namespace faasnode::api::testing {

// Shell commands and the curl check: the e2e tests' helpers.
using faasnode::e2e::CommandResult;
using faasnode::e2e::HaveCurl;
using faasnode::e2e::RunCommand;

// setup(stack) runs on a uthread and returns the handler; teardown runs there after the
// server has shut down (stop what setup started).
class Served {
 public:
  Served(std::function<junction::http::Handler(junction::net::Stack&)> setup, std::function<void()> teardown = {})
      : setup_(std::move(setup)), teardown_(std::move(teardown)) {
    thread_ = std::thread([this] {
      junction::sched::RuntimeConfig c;
      c.cores = junction::sched::testing::FirstCpus(2);
      auto rt = junction::sched::Runtime::Create(c);
      if (!rt) {
        port_ = -1;
        return;
      }
      (void)(*rt)->Run([this] {
        auto stack = junction::net::CreateStack("kernel");
        if (!stack) {
          port_ = -1;
          return;
        }
        auto server = junction::http::Server::Start(**stack, *junction::net::Endpoint::Parse("127.0.0.1:0"),
                                                    setup_(**stack));
        if (!server) {
          port_ = -1;
          return;
        }
        port_ = (*server)->local_endpoint().port;
        while (!stop_.load()) junction::sched::SleepFor(std::chrono::milliseconds(10));
        (*server)->Shutdown(std::chrono::seconds(2));
        server->reset();
        if (teardown_) teardown_();
        stack->reset();
      });
    });
    while (port_.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~Served() {
    stop_ = true;
    thread_.join();
  }
  bool ok() const { return port_.load() > 0; }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_.load()) + path; }
  CommandResult Curl(const std::string& args) const { return RunCommand("curl -s --max-time 10 " + args); }

 private:
  std::function<junction::http::Handler(junction::net::Stack&)> setup_;
  std::function<void()> teardown_;
  std::atomic<int> port_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace faasnode::api::testing
