// async_invoke_test.cc — POST /async-function through a real server and curl: the 202 only
// after the row is durable, the callback, and every listed error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <regex>

#include "faasd-shim/api/async_invoke.h"
#include "faasd-shim/api/router.h"
#include "faasd-shim/api/serve_for_test.h"
#include "faasd-shim/async/async_queue.h"
#include "faasd-shim/async/queue_db.h"

namespace faasnode::api {
namespace {

using testing::Served;

std::string TempDb(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/async-api-" + std::to_string(getpid()) + "-" + name;
  std::filesystem::remove_all(dir);
  return dir + "/async.db";
}

// The node's /function route stand-in: answers with what it was asked.
void Echo(const Request& req, std::string_view rest, Reply& reply) {
  reply.status = 200;
  reply.body = std::string(rest) + "|" + std::string(req.body);
}

struct Callbacks {
  std::mutex mu;
  std::vector<std::string> got;  // "call-id|status|name|body"
};

class AsyncInvoke : public ::testing::Test {
 protected:
  void Start(bool workers) {
    if (!testing::HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
    db_ = TempDb(workers ? "w" : "nw");
    served_ = std::make_unique<Served>(
        [this, workers](junction::net::Stack& stack) {
          async::AsyncOptions o;
          o.db_path = db_;
          auto q = async::AsyncQueue::Open(o, Echo, &stack);
          EXPECT_TRUE(q) << q.error().message();
          queue_ = std::move(*q);
          if (workers) {
            EXPECT_TRUE(queue_->Start());
          }
          router_.Prefix("/async-function/", MakeAsyncInvokeHandler(queue_.get(), "faasnode/test"));
          router_.Exact("/stop-queue", [this](const Request&, std::string_view, Reply& r) {
            queue_->Stop();
            r.status = 200;
          });
          router_.Exact("/cb", [this](const Request& req, std::string_view, Reply& r) {
            std::lock_guard lock(cb_.mu);
            cb_.got.push_back(std::string(req.headers.Find("X-Call-Id").value_or("")) + "|" +
                              std::string(req.headers.Find("X-Function-Status").value_or("")) + "|" +
                              std::string(req.headers.Find("X-Function-Name").value_or("")) + "|" +
                              std::string(req.body));
            r.status = 204;
          });
          return router_.Handler();
        },
        [this] {
          queue_->Stop();
          queue_.reset();
        });
    ASSERT_TRUE(served_->ok());
  }
  testing::CommandResult Post(const std::string& path, const std::string& extra = "") {
    return served_->Curl("-D - -X POST -d 'hi' " + extra + " '" + served_->Url(path) + "'");
  }

  std::string db_;
  std::unique_ptr<async::AsyncQueue> queue_;
  Router router_;
  Callbacks cb_;
  std::unique_ptr<Served> served_;
};

TEST_F(AsyncInvoke, Accepts202WithCallIdAndCallsBack) {
  Start(/*workers=*/true);
  auto r = Post("/async-function/echo.openfaas-fn/sub?q=1", "-H 'X-Callback-Url: " + served_->Url("/cb") + "'");
  EXPECT_NE(r.output.find("HTTP/1.1 202"), std::string::npos) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("X-Call-Id: ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})")))
      << r.output;
  const std::string id = m[1];
  EXPECT_TRUE(std::regex_search(r.output, std::regex("X-Start-Time: [0-9]{19}"))) << r.output;
  EXPECT_NE(r.output.find("X-Served-By: faasnode/test"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Content-Length: 0"), std::string::npos) << r.output;
  // A call id the client chose is kept.
  auto mine = Post("/async-function/echo", "-H 'X-Call-Id: chosen-1' -H 'X-Callback-Url: " + served_->Url("/cb") + "'");
  EXPECT_NE(mine.output.find("X-Call-Id: chosen-1"), std::string::npos) << mine.output;
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(cb_.mu);
      if (cb_.got.size() == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::lock_guard lock(cb_.mu);
  ASSERT_EQ(cb_.got.size(), 2u);
  if (cb_.got[0].starts_with("chosen-1")) std::swap(cb_.got[0], cb_.got[1]);
  EXPECT_EQ(cb_.got[0], id + "|200|echo.openfaas-fn|echo.openfaas-fn/sub|hi");
  EXPECT_EQ(cb_.got[1], "chosen-1|200|echo|echo|hi");
}

TEST_F(AsyncInvoke, The202MeansTheRowIsOnDisk) {
  Start(/*workers=*/false);  // nothing runs the call: it must wait in the database
  auto r = Post("/async-function/echo");
  ASSERT_NE(r.output.find("HTTP/1.1 202"), std::string::npos) << r.output;
  auto db = async::QueueDb::Open(db_);  // a second connection to the same file
  ASSERT_TRUE(db) << db.error().message();
  auto pending = (*db)->LoadPending();
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].function, "echo");
  EXPECT_EQ((*pending)[0].body, "hi");
  EXPECT_NE(r.output.find("X-Call-Id: " + (*pending)[0].call_id), std::string::npos);
}

TEST_F(AsyncInvoke, ListedErrors) {
  Start(/*workers=*/false);
  auto code = [&](const std::string& args) {
    return served_->Curl("-o /dev/null -w '%{http_code}' " + args).output;
  };
  EXPECT_EQ(code("'" + served_->Url("/async-function/echo") + "'"), "405") << "GET";
  EXPECT_EQ(code("-X PUT '" + served_->Url("/async-function/echo") + "'"), "405");
  EXPECT_EQ(code("-X POST '" + served_->Url("/async-function/") + "'"), "404");
  EXPECT_EQ(code("-X POST '" + served_->Url("/async-function/bad%24name") + "'"), "404");
  auto bad = served_->Curl("-w ' %{http_code}' -X POST -H 'X-Callback-Url: https://example.com/cb' '" +
                           served_->Url("/async-function/echo") + "'");
  EXPECT_NE(bad.output.find("X-Callback-Url"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find(" 400"), std::string::npos) << bad.output;
  auto db = async::QueueDb::Open(db_);
  ASSERT_TRUE(db);
  EXPECT_EQ((*db)->CountPending().value_or(-1), 0) << "nothing refused was queued";
  // A queue that no longer takes calls: 500 with the gateway's text, nothing queued.
  EXPECT_EQ(code("'" + served_->Url("/stop-queue") + "'"), "200");
  auto closed = served_->Curl("-w ' %{http_code}' -X POST -d x '" + served_->Url("/async-function/echo") + "'");
  EXPECT_EQ(closed.output.rfind("Error queuing request: ", 0), 0u) << closed.output;
  EXPECT_NE(closed.output.find(" 500"), std::string::npos) << closed.output;
  EXPECT_EQ((*db)->CountPending().value_or(-1), 0);
}

TEST(NewCallUuid, IsVersion4AndDistinct) {
  const std::string a = NewCallUuid(), b = NewCallUuid();
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::regex_match(a, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"))) << a;
}

}  // namespace
}  // namespace faasnode::api
