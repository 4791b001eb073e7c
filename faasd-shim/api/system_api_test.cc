// system_api_test.cc — the /system endpoints in one process, driven with curl: a real
// SystemDeployer over pools of the sample echo function (and exec `cat`), the reaper running.
// Covers the scale labels (floor, scale to zero, its duration), secret names, the memory limit
// a native function cannot have, the listed namespace errors, unknown routes and scale to 0.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "faasd-shim/api/invoke.h"
#include "faasd-shim/api/router.h"
#include "faasd-shim/api/serve_for_test.h"
#include "faasd-shim/api/system_common.h"
#include "faasd-shim/api/system_deployer.h"
#include "faasd-shim/api/system_function.h"
#include "faasd-shim/api/system_functions.h"
#include "faasd-shim/api/system_namespace.h"
#include "faasd-shim/api/system_namespaces.h"
#include "faasd-shim/api/system_scale.h"
#include "faasd-shim/api/system_secrets.h"

namespace faasnode::api {
namespace {

using Json = nlohmann::json;
using testing::Served;

struct Http {
  int status = 0;
  std::string headers;
  std::string body;
};

class SystemApi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
    dir_ = ::testing::TempDir() + "/system-api-" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    served_ = std::make_unique<Served>(
        [this](junction::net::Stack&) {
          auto db = state::StateDb::Open(dir_ + "/state");
          EXPECT_TRUE(db) << db.error().message();
          db_ = std::move(*db);
          secrets_ = std::make_unique<state::SecretStore>(db_.get());
          auto store = store::FunctionStore::Open(FAASNODE_FUNCTIONS_DIR);
          EXPECT_TRUE(store) << store.error().message();
          store_ = std::move(*store);
          manager_ = std::make_unique<instances::InstanceManager>(store_.get());
          DeployerOptions o;
          o.images["faasnode/echo:latest"] = "echo";
          o.scale_zero_idle = std::chrono::milliseconds(100);  // short: a floor that holds is the floor's doing
          o.exec_tmp_dir = dir_ + "/exec";
          deployer_ = std::make_unique<SystemDeployer>(manager_.get(), db_.get(), secrets_.get(), o);
          EXPECT_TRUE(manager_->StartReaper(std::chrono::milliseconds(20)));
          router_.Exact("/system/functions", MakeSystemFunctionsHandler(deployer_.get()));
          router_.Prefix("/system/function/", MakeSystemFunctionHandler(deployer_.get()));
          router_.Prefix("/system/scale-function/", MakeSystemScaleHandler(deployer_.get()));
          router_.Exact("/system/secrets", MakeSystemSecretsHandler(deployer_.get()));
          router_.Exact("/system/namespaces", MakeSystemNamespacesHandler(deployer_.get()));
          router_.Prefix("/system/namespace/", MakeSystemNamespaceHandler(deployer_.get()));
          router_.Prefix("/function/", MakeInvokeHandler(manager_.get()));
          return router_.Handler();
        },
        [this] {
          manager_->StopReaper();
          deployer_.reset();
          manager_.reset();
          store_.reset();
          secrets_.reset();
          db_.reset();
        });
    ASSERT_TRUE(served_->ok());
  }

  Http Do(const std::string& method, const std::string& path, const std::string& body = "") {
    std::string cmd = "-D " + dir_ + "/h -o " + dir_ + "/b -w '%{http_code}' -X " + method;
    if (!body.empty()) {
      std::ofstream(dir_ + "/req") << body;
      cmd += " -H 'Content-Type: application/json' --data-binary @" + dir_ + "/req";
    }
    Http h;
    h.status = std::atoi(served_->Curl(cmd + " '" + served_->Url(path) + "'").output.c_str());
    std::ifstream hf(dir_ + "/h"), bf(dir_ + "/b");
    h.headers.assign(std::istreambuf_iterator<char>(hf), {});
    h.body.assign(std::istreambuf_iterator<char>(bf), {});
    return h;
  }
  // POST /system/functions of echo (or another image) as NAME with these labels and extras.
  Http Deploy(const std::string& name, const Json& labels, Json more = Json::object()) {
    more["service"] = name;
    if (!more.contains("image")) more["image"] = "faasnode/echo:latest";
    more["labels"] = labels;
    return Do("POST", "/system/functions", more.dump());
  }
  Json Status(const std::string& name) { return Json::parse(Do("GET", "/system/function/" + name).body, nullptr, false); }
  int Available(const std::string& name) { return Status(name).value("availableReplicas", 0); }
  // Waits up to `limit` for NAME's availableReplicas to be `want`; returns the last seen.
  int WaitAvailable(const std::string& name, int want, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int n = Available(name);
    while (n != want && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      n = Available(name);
    }
    return n;
  }

  std::string dir_;
  std::unique_ptr<state::StateDb> db_;
  std::unique_ptr<state::SecretStore> secrets_;
  std::unique_ptr<store::FunctionStore> store_;
  std::unique_ptr<instances::InstanceManager> manager_;
  std::unique_ptr<SystemDeployer> deployer_;
  Router router_;
  std::unique_ptr<Served> served_;
};

void ExpectPlain(const Http& r, int status, const std::string& body, const std::string& what) {
  EXPECT_EQ(r.status, status) << what << " -> " << r.body;
  EXPECT_EQ(r.body, body) << what;
  EXPECT_NE(r.headers.find("Content-Type: text/plain; charset=utf-8"), std::string::npos) << what << r.headers;
}

// com.openfaas.scale.min: that many instances are started and kept, idle or not.
TEST_F(SystemApi, ScaleMinIsAFloorTheReaperKeeps) {
  ASSERT_EQ(Deploy("warm", {{"com.openfaas.scale.min", "2"}, {"com.openfaas.scale.max", "3"}}).status, 200);
  EXPECT_EQ(Available("warm"), 2);
  auto pool = manager_->Find("warm");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->floor(), 2);
  EXPECT_EQ(pool->options().replicas, 3);
  // Idle well past the idle timeout (100 ms here) with the reaper running every 20 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Available("warm"), 2) << "the floor holds while idle";
  EXPECT_EQ(Do("POST", "/function/warm", "x").body, "x");
}

// com.openfaas.scale.zero=true with com.openfaas.scale.zero-duration: one warm at deploy, none
// after the idle duration, and the next call cold-starts one.
TEST_F(SystemApi, ScaleZeroScalesToZeroAfterItsDuration) {
  ASSERT_EQ(Deploy("napper", {{"com.openfaas.scale.zero", "true"}, {"com.openfaas.scale.zero-duration", "200ms"}}).status,
            200);
  EXPECT_EQ(manager_->Find("napper")->floor(), 0);
  EXPECT_EQ(manager_->Find("napper")->options().idle_timeout, std::chrono::milliseconds(200));
  EXPECT_EQ(WaitAvailable("napper", 0, std::chrono::seconds(3)), 0) << "scaled to zero when idle";
  Json s = Status("napper");
  EXPECT_FALSE(s.contains("replicas")) << s.dump();
  Http call = Do("POST", "/function/napper", "wake");
  EXPECT_EQ(call.body, "wake");
  EXPECT_NE(call.headers.find("X-Cold-Start-Seconds: "), std::string::npos) << call.headers;
  EXPECT_EQ(Available("napper"), 1);
}

// The duration is the label's, not the node's default (100 ms here); zero=false keeps one.
TEST_F(SystemApi, ScaleZeroDurationAndZeroFalseKeepInstances) {
  ASSERT_EQ(Deploy("slow-napper", {{"com.openfaas.scale.zero", "true"}, {"com.openfaas.scale.zero-duration", "1h"}}).status,
            200);
  ASSERT_EQ(Deploy("awake", {{"com.openfaas.scale.zero", "false"}}).status, 200);
  EXPECT_EQ(manager_->Find("slow-napper")->options().idle_timeout, std::chrono::hours(1));
  EXPECT_EQ(manager_->Find("awake")->floor(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Available("slow-napper"), 1);
  EXPECT_EQ(Available("awake"), 1);
  const std::string before = Do("GET", "/system/functions").body;
  for (const auto& [label, value] : std::vector<std::pair<std::string, std::string>>{
           {"com.openfaas.scale.zero", "yes"},
           {"com.openfaas.scale.zero-duration", "soon"},
           {"com.openfaas.scale.min", "-1"}}) {
    Http bad = Deploy("bad", {{label, value}});
    EXPECT_EQ(bad.status, 400) << label << "=" << value;
    EXPECT_NE(bad.body.find(label), std::string::npos) << bad.body;
  }
  EXPECT_EQ(Do("GET", "/system/functions").body, before) << "nothing deployed";
}

// replicas 0 is clamped to 1 as the gateway does (openfaas-api.md 2.3 Scale): the function
// keeps one instance, the answer is 200.
TEST_F(SystemApi, ScaleToZeroReplicasKeepsOne) {
  ASSERT_EQ(Deploy("fn", {{"com.openfaas.scale.max", "3"}}).status, 200);
  ASSERT_EQ(Do("POST", "/system/scale-function/fn", R"({"serviceName":"fn","replicas":2})").status, 200);
  EXPECT_EQ(Available("fn"), 2);
  Http zero = Do("POST", "/system/scale-function/fn", R"({"serviceName":"fn","replicas":0})");
  EXPECT_EQ(zero.status, 200) << zero.body;
  EXPECT_EQ(zero.body, "");
  EXPECT_EQ(manager_->Find("fn")->floor(), 1) << "the reaper keeps one";
  EXPECT_GE(Available("fn"), 1);
}

// Secret names follow the OpenFaaS name rule; a refused one changes nothing stored.
TEST_F(SystemApi, SecretNamesOutsideTheNameRuleAre400) {
  ASSERT_EQ(Do("POST", "/system/secrets", R"({"name":"k","value":"v"})").status, 200);
  ASSERT_EQ(Do("POST", "/system/secrets", R"({"name":"a-b_c.D9","value":"ok"})").status, 200);
  const std::string listed = Do("GET", "/system/secrets").body;
  EXPECT_EQ(listed, R"([{"name":"a-b_c.D9","namespace":"openfaas-fn"},{"name":"k","namespace":"openfaas-fn"}])");
  for (const std::string name : {"a b", "x$y", "k\\u00e9", "a:b", "k;rm"}) {
    for (const char* method : {"POST", "PUT", "DELETE"}) {
      Http r = Do(method, "/system/secrets", R"({"name":")" + name + R"(","value":"new"})");
      EXPECT_EQ(r.status, 400) << method << " " << name << " -> " << r.body;
      EXPECT_NE(r.body.find("is not valid"), std::string::npos) << r.body;
      EXPECT_NE(r.body.find("[-a-zA-Z_0-9.]"), std::string::npos) << r.body;
      EXPECT_NE(r.headers.find("text/plain"), std::string::npos) << r.headers;
    }
  }
  EXPECT_EQ(Do("GET", "/system/secrets").body, listed);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/state/secrets/openfaas-fn/x$y"));
  EXPECT_EQ(*secrets_->Value("openfaas-fn", "k"), "v");
  // The traversal checks come first, with faasd's own text.
  EXPECT_EQ(Do("POST", "/system/secrets", R"({"name":"a/b c","value":"v"})").body, "directory traversal found in name\n");
}

// A native function's limits.memory is not enforced: the function's JSON says so.
TEST_F(SystemApi, NativeMemoryLimitIsReportedAsNotEnforced) {
  const std::string key(kMemoryNotEnforcedAnnotation);
  ASSERT_EQ(Deploy("capped", Json::object(), {{"limits", {{"memory", "64Mi"}}}, {"annotations", {{"topic", "demo"}}}}).status,
            200);
  Json one = Status("capped");
  EXPECT_EQ(one["annotations"]["topic"], "demo");
  ASSERT_TRUE(one["annotations"].contains(key)) << one.dump();
  EXPECT_NE(one["annotations"][key].get<std::string>().find("not enforced"), std::string::npos);
  Json list = Json::parse(Do("GET", "/system/functions").body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["limits"]["memory"], "64Mi");
  EXPECT_TRUE(list[0]["annotations"].contains(key)) << list.dump();
  // Without a limit: nothing to say.
  ASSERT_EQ(Deploy("free", Json::object()).status, 200);
  EXPECT_FALSE(Status("free")["annotations"].contains(key));
  // An exec function gets the limit (RLIMIT_AS): no annotation, even one a client sent.
  Http exec = Deploy("cat", Json::object(),
                     {{"image", "ghcr.io/openfaas/alpine:latest"},
                      {"envProcess", "cat"},
                      {"limits", {{"memory", "64Mi"}}},
                      {"annotations", {{key, "made up"}}}});
  ASSERT_EQ(exec.status, 200) << exec.body;
  EXPECT_FALSE(Status("cat")["annotations"].contains(key)) << Status("cat").dump();
}

// The listed errors of openfaas-api.md 2.3 for namespaces, with faasd's status and text.
TEST_F(SystemApi, NamespaceErrorsAsListed) {
  ASSERT_EQ(Deploy("echo", Json::object()).status, 200);
  const std::string before = Do("GET", "/system/functions").body;
  const std::string invalid = "namespace not valid\n";
  ExpectPlain(Do("DELETE", "/system/functions", R"({"functionName":"echo","namespace":"nowhere"})"), 400, invalid,
              "DELETE in an unknown namespace");
  ExpectPlain(Do("GET", "/system/function/echo?namespace=nowhere"), 400, invalid, "GET one");
  ExpectPlain(Do("POST", "/system/scale-function/echo", R"({"serviceName":"echo","replicas":1,"namespace":"nowhere"})"),
              400, invalid, "scale");
  ExpectPlain(Do("GET", "/system/secrets?namespace=nowhere"), 400, invalid, "list secrets");
  ExpectPlain(Do("POST", "/system/secrets", R"({"name":"k","value":"v","namespace":"nowhere"})"), 400, invalid,
              "create a secret");
  ExpectPlain(Do("PUT", "/system/functions", R"({"service":"echo","image":"faasnode/echo:latest","namespace":"nowhere"})"),
              400, invalid, "PUT in an unknown namespace");
  // A namespace without openfaas=1 is not valid either.
  ASSERT_EQ(Do("POST", "/system/namespace/", R"({"name":"dev","labels":{"openfaas":"1"}})").status, 201);
  ASSERT_EQ(Do("PUT", "/system/namespace/dev", R"({"name":"dev","labels":{"openfaas":"1"}})").status, 202);
  ExpectPlain(Do("PUT", "/system/namespace/ghost", R"({"name":"ghost","labels":{"openfaas":"1"}})"), 404,
              "namespace ghost not found\n", "PUT of a missing namespace");
  ExpectPlain(Do("DELETE", "/system/namespace/ghost", R"({"name":"ghost","labels":{"openfaas":"1"}})"), 404,
              "namespace ghost not found\n", "DELETE of a missing namespace");
  ExpectPlain(Do("GET", "/system/namespace/ghost"), 404, "namespace ghost not found\n", "GET of a missing namespace");
  Http bad_json = Do("POST", "/system/namespace/", R"({"name":)");
  EXPECT_EQ(bad_json.status, 400) << bad_json.body;
  EXPECT_NE(bad_json.body.find("malformed JSON"), std::string::npos) << bad_json.body;
  Http empty = Do("POST", "/system/namespace/", R"({"name":"","labels":{"openfaas":"1"}})");
  EXPECT_EQ(empty.status, 400);
  EXPECT_NE(empty.body.find("namespace name is required"), std::string::npos) << empty.body;
  EXPECT_EQ(Do("GET", "/system/namespace/").status, 400);
  // 405 (empty body, as gorilla/mux) for a method /system/secrets does not route.
  Http patch = Do("PATCH", "/system/secrets", R"({"name":"k"})");
  EXPECT_EQ(patch.status, 405);
  EXPECT_EQ(patch.body, "");
  EXPECT_EQ(Do("GET", "/system/functions").body, before) << "nothing changed";
  EXPECT_EQ(Do("GET", "/system/namespaces").body, R"(["openfaas-fn","dev"])");
}

// A path no route knows: Go's 404, text/plain "404 page not found".
TEST_F(SystemApi, UnknownRoutesGetGoNotFound) {
  for (const char* path : {"/nope", "/system/functionsx", "/system/nope", "/ui/"}) {
    Http r = Do("GET", path);
    ExpectPlain(r, 404, "404 page not found\n", path);
    EXPECT_NE(r.headers.find("X-Content-Type-Options: nosniff"), std::string::npos) << r.headers;
  }
}

}  // namespace
}  // namespace faasnode::api
