// instance_test.cc — Instance: lifecycle, the request as the function sees it, host refusals.
//
// Init/fini once, the request and env as the function sees them, the host's refusals (status,
// headers, body limit), failing handlers and inits, a function in plain C.
#include "faasd-shim/store/instance.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "faasd-shim/store/function_store.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::store {
namespace {

using junction::ErrorCode;

// Collects log records (owned copies) in order.
struct LogCapture {
  struct Line {
    std::string function;
    std::uint64_t call_id;
    LogLevel level;
    std::string message;
  };
  std::vector<Line> lines;
  LogSink Sink() {
    return [this](const LogRecord& r) {
      lines.push_back({std::string(r.function), r.call_id, r.level, std::string(r.message)});
    };
  }
  int Count(std::string_view message) const {
    int n = 0;
    for (const Line& l : lines) n += l.message == message;
    return n;
  }
};

// "k=v" lines of the probe's body.
std::map<std::string, std::string> Fields(const std::string& body) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t nl = body.find('\n', pos);
    std::string line = body.substr(pos, nl - pos);
    std::size_t eq = line.find('=');
    out[line.substr(0, eq)] = line.substr(eq + 1);
    pos = nl == std::string::npos ? body.size() : nl + 1;
  }
  return out;
}

class InstanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = FunctionStore::Open(FAASNODE_STORE_TESTDATA_DIR);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    store_ = std::move(*s);
    auto fn = store_->Load("probe");
    ASSERT_TRUE(fn.has_value()) << fn.error().message();
    probe_ = *fn;
  }
  InstanceOptions Options() {
    InstanceOptions o;
    o.log = log_.Sink();
    return o;
  }

  std::unique_ptr<FunctionStore> store_;
  std::shared_ptr<const NativeFunction> probe_;
  LogCapture log_;
};

TEST_F(InstanceTest, InitOnceStatePersistsFiniOnce) {
  {
    auto inst = Instance::Create(probe_, {}, Options());
    ASSERT_TRUE(inst.has_value()) << inst.error().message();
    EXPECT_EQ(log_.Count("init"), 1);
    Instance moved = std::move(*inst);  // a move neither re-inits nor finis
    Response resp;
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(moved.Invoke({}, resp).has_value());
      EXPECT_EQ(Fields(resp.body)["call"], std::to_string(i));
    }
    EXPECT_EQ(log_.Count("init"), 1);
    EXPECT_EQ(log_.Count("fini"), 0);
  }
  EXPECT_EQ(log_.Count("init"), 1);
  EXPECT_EQ(log_.Count("fini"), 1);
  ASSERT_FALSE(log_.lines.empty());
  EXPECT_EQ(log_.lines.back().message, "fini");
  EXPECT_EQ(log_.lines.back().call_id, 0u);
  EXPECT_EQ(log_.lines.back().function, "probe");
}

TEST_F(InstanceTest, MoveAssignmentFinisTheReplacedInstance) {
  auto a = Instance::Create(probe_, {}, Options());
  auto b = Instance::Create(probe_, {}, Options());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(log_.Count("init"), 2);
  *a = std::move(*b);
  EXPECT_EQ(log_.Count("fini"), 1);
}

TEST_F(InstanceTest, TheFunctionSeesTheWholeRequestAndItsEnvironment) {
  FunctionEnv env;
  env.vars = {{"MODE", "test"}, {"OTHER", "x"}};
  env.secrets = {{"api-key", "s3cret"}};
  auto inst = Instance::Create(probe_, std::move(env), Options());
  ASSERT_TRUE(inst.has_value()) << inst.error().message();

  const Header headers[] = {{"Content-Type", "text/plain"}, {"X-Test", "42"}, {"Accept", "*/*"}};
  Request req;
  req.method = "PUT";
  req.path = "/a/b";
  req.query = "q=1&r=two";
  req.headers = headers;
  req.body = std::string_view("bo\0dy", 5);
  req.deadline = junction::sched::Clock::now() + std::chrono::seconds(10);
  req.call_id = 77;
  Response resp;
  auto s = inst->Invoke(req, resp);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(resp.status, 203);
  EXPECT_TRUE(resp.headers.empty());  // a native function's headers arrive as checked lines
  ASSERT_EQ(resp.AllHeaders().size(), 1u);
  EXPECT_EQ(resp.AllHeaders()[0], (std::pair<std::string, std::string>("X-Probe", "yes")));
  EXPECT_EQ(resp.header_lines, "X-Probe: yes\r\n");
  auto f = Fields(resp.body);
  EXPECT_EQ(f["method"], "PUT");
  EXPECT_EQ(f["path"], "/a/b");
  EXPECT_EQ(f["query"], "q=1&r=two");
  EXPECT_EQ(f["headers"], "3");
  EXPECT_EQ(f["x-test"], "42");  // looked up as "x-TEST": case-insensitive
  EXPECT_EQ(f["body"], std::string("bo\0dy", 5));
  EXPECT_EQ(f["var"], "test");
  EXPECT_EQ(f["secret"], "s3cret");
  EXPECT_EQ(f["deadline"], "set");
  int remaining = std::stoi(f["remaining_ms"]);
  EXPECT_GT(remaining, 9000);
  EXPECT_LE(remaining, 10000);

  // The handler's log line carries the call id.
  ASSERT_EQ(log_.Count("handled"), 1);
  for (const auto& l : log_.lines) {
    if (l.message == "handled") {
      EXPECT_EQ(l.call_id, 77u);
      EXPECT_EQ(l.level, LogLevel::kWarn);
    }
  }

  // Defaults: no deadline, no env.
  auto bare = Instance::Create(probe_, {}, Options());
  ASSERT_TRUE(bare.has_value());
  ASSERT_TRUE(bare->Invoke({}, resp).has_value());
  auto g = Fields(resp.body);
  EXPECT_EQ(g["deadline"], "none");
  EXPECT_EQ(g["var"], "<none>");
  EXPECT_EQ(g["secret"], "<none>");
  EXPECT_EQ(g["method"], "GET");
}

TEST_F(InstanceTest, ManyHeadersGoPastTheInlineBuffer) {
  auto inst = Instance::Create(probe_, {}, Options());
  ASSERT_TRUE(inst.has_value());
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("H" + std::to_string(i));
  std::vector<Header> headers;
  for (const auto& n : names) headers.push_back({n, "v"});
  headers.push_back({"x-test", "last"});
  Request req;
  req.headers = headers;
  Response resp;
  ASSERT_TRUE(inst->Invoke(req, resp).has_value());
  EXPECT_EQ(Fields(resp.body)["headers"], "101");
  EXPECT_EQ(Fields(resp.body)["x-test"], "last");
}

TEST_F(InstanceTest, RefusedResponsesFailTheCallAndSayWhy) {
  InstanceOptions o = Options();
  o.max_response_body_bytes = 1024;
  auto inst = Instance::Create(probe_, {}, o);
  ASSERT_TRUE(inst.has_value());
  struct Case {
    const char* query;
    ErrorCode code;
    const char* says;
  };
  const Case cases[] = {
      {"do=bad-status", ErrorCode::kInvalidArgument,
       "function 'probe' set status 99, outside 200..599"},
      {"do=bad-header", ErrorCode::kInvalidArgument,
       "header named 'Bad Name', which is not an RFC 9110 token"},
      {"do=crlf", ErrorCode::kInvalidArgument,
       "CR, LF or NUL in its value 'a\\x0d\\x0aSet-Cookie: x'"},
      {"do=framing", ErrorCode::kInvalidArgument,
       "header 'content-length', which the node writes itself"},
      {"do=big", ErrorCode::kResourceExhausted, "wrote more than 1024 bytes of response body"},
      {"do=throw", ErrorCode::kInternal, "function 'probe' failed: handle returned 3"},
      {"do=fail", ErrorCode::kInternal, "function 'probe' failed: handle returned 3"},
      {"do=bad-zone", ErrorCode::kInvalidArgument,
       "reported energy in zone 7; the only zone a function may report is"},
      {"do=bad-source", ErrorCode::kInvalidArgument, "reported energy from source 9"},
      {"do=bad-joules", ErrorCode::kInvalidArgument, "joules must be finite and >= 0"},
  };
  for (const Case& c : cases) {
    Response resp;
    resp.body = "stale";
    Request req;
    req.query = c.query;
    auto s = inst->Invoke(req, resp);
    ASSERT_FALSE(s.has_value()) << c.query;
    EXPECT_EQ(s.error().code(), c.code) << c.query;
    EXPECT_NE(s.error().message().find(c.says), std::string::npos)
        << c.query << ": " << s.error().message();
    EXPECT_TRUE(resp.body.empty()) << c.query;
    EXPECT_TRUE(resp.AllHeaders().empty()) << c.query;
    EXPECT_TRUE(resp.energy.empty()) << c.query;
  }
  EXPECT_EQ(log_.Count("handler threw: asked to throw"), 1);
  EXPECT_EQ(log_.Count("handler threw: an exception not derived from std::exception"), 1);
  // The instance is still usable afterwards.
  Response ok;
  EXPECT_TRUE(inst->Invoke({}, ok).has_value());
  EXPECT_EQ(ok.status, 203);
}

TEST_F(InstanceTest, ReportedEnergyReachesTheResponseInOrder) {
  auto inst = Instance::Create(probe_, {}, Options());
  ASSERT_TRUE(inst.has_value());
  Response resp;
  Request req;
  req.query = "do=energy";
  ASSERT_TRUE(inst->Invoke(req, resp).has_value());
  ASSERT_EQ(resp.energy.size(), 2u);
  EXPECT_EQ(resp.energy[0].zone, MeasuredZone::kGpu);
  EXPECT_EQ(resp.energy[0].source, MeasuredSource::kNvml);
  EXPECT_DOUBLE_EQ(resp.energy[0].joules, 1.25);
  EXPECT_DOUBLE_EQ(resp.energy[1].joules, 0.5);
  // A call that reports nothing leaves the list empty (the response is reused).
  ASSERT_TRUE(inst->Invoke({}, resp).has_value());
  EXPECT_TRUE(resp.energy.empty());
}

// As the node runs them: on a uthread, where a C++ exception unwinds the uthread's own stack.
TEST_F(InstanceTest, OnAUthreadAThrowingHandlerFailsOnlyItsCall) {
  auto inst = Instance::Create(probe_, {}, Options());
  ASSERT_TRUE(inst.has_value());
  junction::sched::testing::RunOnCores(1, [&] {
    ASSERT_TRUE(junction::sched::InRuntime());
    Request req;
    req.query = "do=throw";
    Response resp;
    auto s = inst->Invoke(req, resp);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code(), ErrorCode::kInternal);
    EXPECT_TRUE(inst->Invoke({}, resp).has_value());
    EXPECT_EQ(resp.status, 203);
  });
  EXPECT_EQ(log_.Count("handler threw: asked to throw"), 1);
}

TEST_F(InstanceTest, FailedInitIsReportedAndNotFinied) {
  FunctionEnv env;
  env.vars = {{"FAIL_INIT", "1"}};
  auto inst = Instance::Create(probe_, std::move(env), Options());
  ASSERT_FALSE(inst.has_value());
  EXPECT_EQ(inst.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(inst.error().message().find("function 'probe' ("), std::string::npos);
  EXPECT_NE(inst.error().message().find("failed to start: init returned 3"), std::string::npos)
      << inst.error().message();
  EXPECT_EQ(log_.Count("init failed: FAIL_INIT is set"), 1);
  EXPECT_EQ(log_.Count("fini"), 0);
}

TEST_F(InstanceTest, AFunctionWrittenInCAgainstTheRawAbi) {
  auto fn = store_->Load("c-hello");
  ASSERT_TRUE(fn.has_value()) << fn.error().message();
  {
    auto inst = Instance::Create(*fn, {}, Options());
    ASSERT_TRUE(inst.has_value()) << inst.error().message();
    Request req;
    req.method = "POST";
    Response resp;
    auto s = inst->Invoke(req, resp);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ(resp.status, 201);
    EXPECT_EQ(resp.body, "hello from C, POST");
    ASSERT_EQ(resp.AllHeaders().size(), 1u);
    EXPECT_EQ(resp.AllHeaders()[0].first, "Content-Type");
  }
  EXPECT_EQ(log_.Count("c-hello init"), 1);
  EXPECT_EQ(log_.Count("c-hello fini"), 1);
}

}  // namespace
}  // namespace faasnode::store
