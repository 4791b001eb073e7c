// faas_cli_flow_test.cc — the OpenFaaS API of the real `faasnode serve`, driven with curl
// exactly as faas-cli drives a faasd gateway (openfaas-api.md section 5.1): login, deploy
// (PUT, then POST on 404), list, describe, invoke without auth, async with a callback,
// secrets, logs, namespaces, scale, remove; configs/stack.yml deployed as faas-cli deploys it;
// durability across kill -9; bad input that changes nothing.
//
// Against a node that is already running (the one scripts/run.sh starts):
//   FAASNODE_URL=http://127.0.0.1:8080 FAASNODE_STATE_DIR=faasnode-state build/tests/integration/faas_cli_flow_test
// (the kill -9 test needs a node of its own and is skipped then).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/callback_listener.h"
#include "tests/integration/e2e_util.h"

namespace {

using Json = nlohmann::json;

using Result = faasnode::e2e::CommandResult;
using faasnode::e2e::FreePort;
using faasnode::e2e::HaveCurl;
inline Result Run(const std::string& cmd) { return faasnode::e2e::RunCommand(cmd); }

// One HTTP exchange as curl reports it: status, headers, body.
struct Http {
  int status = 0;
  std::string headers;
  std::string body;
};

// The node under test. By default one on loopback with its own state dir, started by the test
// (Start/Stop can be repeated on the same dir). With FAASNODE_URL set (e.g.
// http://127.0.0.1:8080, the node scripts/run.sh starts), the tests drive that node instead:
// its password is read from FAASNODE_STATE_DIR/basic-auth-password (default faasnode-state,
// run.sh's state dir), it is never started or stopped here, and what the tests create is
// named with a suffix of this run (Name) and removed again.
class Node {
 public:
  Node() {
    if (const char* url = std::getenv("FAASNODE_URL"); url != nullptr && *url != '\0') {
      external_ = true;
      base_ = url;
      while (!base_.empty() && base_.back() == '/') base_.pop_back();
      dir_ = ::testing::TempDir() + "/flow-ext-" + std::to_string(getpid());
      std::filesystem::create_directories(dir_);
      const char* state = std::getenv("FAASNODE_STATE_DIR");
      state_dir_ = state != nullptr && *state != '\0' ? state : "faasnode-state";
      ReadPassword();
      if (Run("curl -s -o /dev/null -w '%{http_code}' " + Url("/healthz")).output != "200") {
        ADD_FAILURE() << "FAASNODE_URL=" << base_ << ": GET /healthz did not answer 200";
      }
      return;
    }
    port_ = FreePort();
    base_ = "http://127.0.0.1:" + std::to_string(port_);
    dir_ = ::testing::TempDir() + "/flow-" + std::to_string(getpid()) + "-" + std::to_string(port_);
    state_dir_ = dir_ + "/state";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = dir_ + "/node.toml";
    std::ofstream(config_) << "[runtime]\ncores = [0]\n[net]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
                           << "[state]\ndir = \"" << state_dir_ << "\"\n"
                           << "[energy]\nledger = \"" << dir_ << "/ledger.db\"\n"
                           << "[functions.echo]\n[functions.hello]\n";
    Start();
  }
  ~Node() { Stop(SIGTERM); }

  bool external() const { return external_; }
  // A name for something a test creates: itself on a node of the test's own, with this run's
  // suffix on an external node (so runs and what is already there do not collide).
  std::string Name(const std::string& base) const {
    return external_ ? base + "-t" + std::to_string(getpid()) : base;
  }

  void Start() {
    if (external_) return;
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen((dir_ + "/log").c_str(), "a", stdout);
      (void)f;
      dup2(fileno(stdout), 2);
      execl(FAASNODE_BIN, FAASNODE_BIN, "serve", "--config", config_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      if (Run("curl -s -o /dev/null -w '%{http_code}' " + Url("/healthz")).output == "200") {
        ReadPassword();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "faasnode did not come up:\n" << Log();
  }
  void Stop(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string Url(const std::string& path) const { return "'" + base_ + path + "'"; }
  std::string Log() const {
    if (external_) return "(the node at " + base_ + " keeps its own log)";
    std::ifstream f(dir_ + "/log");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  const std::string& password() const { return password_; }
  const std::string& state_dir() const { return state_dir_; }

  // A request as faas-cli makes it: basic auth from the saved login, JSON body.
  Http Cli(const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& extra = "") const {
    std::string cmd = "curl -s --max-time 10 -D " + dir_ + "/h -o " + dir_ + "/b -w '%{http_code}' -X " + method +
                      " -u admin:" + password_ + " -H 'User-Agent: faas-cli/0.18.12' " + extra;
    if (!body.empty()) {
      std::ofstream(dir_ + "/req") << body;
      cmd += " -H 'Content-Type: application/json' --data-binary @" + dir_ + "/req";
    }
    return Exchange(cmd + " " + Url(path));
  }
  // Without credentials (invocations, and auth checks).
  Http Plain(const std::string& method, const std::string& path, const std::string& body = "",
             const std::string& extra = "") const {
    std::string cmd = "curl -s --max-time 10 -D " + dir_ + "/h -o " + dir_ + "/b -w '%{http_code}' -X " + method +
                      " " + extra;
    if (!body.empty()) {
      std::ofstream(dir_ + "/req") << body;
      cmd += " --data-binary @" + dir_ + "/req";
    }
    return Exchange(cmd + " " + Url(path));
  }

 private:
  void ReadPassword() {
    std::ifstream pw(state_dir_ + "/basic-auth-password");
    std::getline(pw, password_);
    if (password_.empty()) ADD_FAILURE() << "no password in " << state_dir_ << "/basic-auth-password";
  }
  Http Exchange(const std::string& cmd) const {
    Http h;
    auto r = Run(cmd);
    h.status = std::atoi(r.output.c_str());
    std::ifstream hf(dir_ + "/h"), bf(dir_ + "/b");
    h.headers.assign(std::istreambuf_iterator<char>(hf), {});
    h.body.assign(std::istreambuf_iterator<char>(bf), {});
    return h;
  }

  bool external_ = false;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string base_, dir_, state_dir_, config_, password_;
};

// What faas-cli 0.18 sends for `deploy` of a stack entry (proxy/deploy.go).
std::string Deployment(const std::string& name, const std::string& image, const std::string& more = "") {
  return R"({"service":")" + name + R"(","image":")" + image +
         R"(","namespace":"openfaas-fn","envProcess":"","envVars":{},"constraints":[],"secrets":[],)"
         R"("labels":{"com.openfaas.scale.max":"3"},"annotations":{},"limits":null,"requests":null,)"
         R"("readOnlyRootFilesystem":false)" + more + "}";
}

Json Parse(const std::string& s) { return Json::parse(s, nullptr, false); }

TEST(FaasCliFlow, LoginDeployListDescribeInvokeSecretsRemove) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node;
  const std::string fn1 = node.Name("fn1"), reader = node.Name("reader"), key = node.Name("api-key");
  // login: GET /system/functions with basic auth; wrong or missing credentials get faasd's 401.
  for (const std::string& creds : {std::string(), std::string("-u admin:wrong"), std::string("-u root:") + node.password()}) {
    Http denied = node.Plain("GET", "/system/functions", "", creds);
    EXPECT_EQ(denied.status, 401) << creds;
    EXPECT_EQ(denied.body, "invalid credentials");
    EXPECT_NE(denied.headers.find("WWW-Authenticate: Basic realm=\"Restricted\""), std::string::npos) << denied.headers;
  }
  EXPECT_EQ(node.password().size(), 63u);
  Http login = node.Cli("GET", "/system/functions");
  ASSERT_EQ(login.status, 200) << login.body;
  ASSERT_TRUE(Parse(login.body).is_array()) << login.body;

  // deploy: PUT first; 404 means "not there yet", then POST.
  Http put = node.Cli("PUT", "/system/functions", Deployment(fn1, "faasnode/echo:latest"));
  EXPECT_EQ(put.status, 404);
  EXPECT_EQ(put.body, "function: " + fn1 + ".openfaas-fn not found\n");
  Http post = node.Cli("POST", "/system/functions", Deployment(fn1, "faasnode/echo:latest"));
  ASSERT_EQ(post.status, 200) << post.body;
  EXPECT_EQ(post.body, "");
  Http again = node.Cli("POST", "/system/functions", Deployment(fn1, "faasnode/echo:latest"));
  EXPECT_EQ(again.status, 400) << "POST is create-only";
  EXPECT_NE(again.body.find("already exists"), std::string::npos) << again.body;

  // invoke: NAME.openfaas-fn, no Authorization, text/plain; path and query reach the function.
  Http inv = node.Plain("POST", "/function/" + fn1 + ".openfaas-fn", "hello node", "-H 'Content-Type: text/plain'");
  ASSERT_EQ(inv.status, 200) << inv.body;
  EXPECT_EQ(inv.body, "hello node");
  EXPECT_NE(inv.headers.find("X-Call-Id: "), std::string::npos) << inv.headers;
  EXPECT_NE(inv.headers.find("X-Start-Time: "), std::string::npos);
  EXPECT_NE(inv.headers.find("X-Served-By: faasnode/"), std::string::npos);
  EXPECT_NE(inv.headers.find("X-Duration-Seconds: "), std::string::npos);
  Http given = node.Plain("GET", "/function/" + fn1, "", "-H 'X-Call-Id: my-call-7'");
  EXPECT_NE(given.headers.find("X-Call-Id: my-call-7"), std::string::npos) << given.headers;
  Http hello = node.Plain("GET", "/function/hello.openfaas-fn/some/path?name=ada");
  EXPECT_EQ(hello.status, 200);
  EXPECT_NE(hello.body.find("ada"), std::string::npos) << hello.body;
  for (const std::string& missing : {std::string("/function/nope"), std::string("/function/nope.openfaas-fn"),
                                    std::string("/function/.openfaas-fn"), "/function/" + fn1 + ".otherns"}) {
    Http nf = node.Plain("GET", missing);
    EXPECT_EQ(nf.status, 404) << missing;
    EXPECT_NE(nf.body.find("error finding function"), std::string::npos) << nf.body;
  }

  // invoke --async -H X-Callback-Url=...: 202 with a call id at once; the result is POSTed to
  // the callback (a listener this test runs on loopback) with the function's status and name.
  faasnode::e2e::CallbackListener callback;
  Http queued = node.Plain("POST", "/async-function/" + fn1 + ".openfaas-fn", "later, please",
                           "-H 'Content-Type: text/plain' -H 'X-Callback-Url: " + callback.Url() + "'");
  ASSERT_EQ(queued.status, 202) << queued.body;
  EXPECT_EQ(queued.body, "");
  std::smatch id;
  ASSERT_TRUE(std::regex_search(queued.headers, id, std::regex("X-Call-Id: ([-0-9a-zA-Z]+)"))) << queued.headers;
  for (int i = 0; i < 200 && !callback.Got().contains(id[1]); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto got = callback.Got();
  ASSERT_TRUE(got.contains(id[1])) << "no callback for " << id[1] << " in 10 s\n" << node.Log();
  const auto& cb = got.at(id[1]);
  EXPECT_EQ(cb.at("x-function-status"), "200");
  EXPECT_EQ(cb.at("x-function-name").rfind(fn1, 0), 0u) << cb.at("x-function-name");
  EXPECT_TRUE(cb.contains("x-duration-seconds"));
  EXPECT_EQ(callback.Bodies().at(id[1]), "later, please");

  // list: invocationCount per function (the async call counts); describe: ?usage=1,
  // availableReplicas > 0 = Ready.
  Json list = Parse(node.Cli("GET", "/system/functions").body);
  ASSERT_TRUE(list.is_array());
  bool found = false;
  for (const auto& f : list) {
    if (f["name"] != fn1) continue;
    found = true;
    EXPECT_EQ(f["image"], "faasnode/echo:latest");
    EXPECT_EQ(f["namespace"], "openfaas-fn");
    EXPECT_EQ(f["invocationCount"], 3);
    EXPECT_EQ(f["labels"]["com.openfaas.scale.max"], "3");
    EXPECT_TRUE(f["annotations"].is_object());
    EXPECT_FALSE(f.contains("envVars")) << "omitempty";
    EXPECT_FALSE(f.contains("secrets")) << "omitempty";
    EXPECT_FALSE(f.contains("availableReplicas")) << "the list has none, as faasd's";
    EXPECT_TRUE(f["createdAt"].is_string());
  }
  EXPECT_TRUE(found) << list.dump();
  Http describe = node.Cli("GET", "/system/function/" + fn1 + "?namespace=openfaas-fn&usage=1");
  ASSERT_EQ(describe.status, 200);
  Json d = Parse(describe.body);
  EXPECT_GE(d["availableReplicas"].get<int>(), 1) << describe.body;
  Http nodesc = node.Cli("GET", "/system/function/ghost?usage=1");
  EXPECT_EQ(nodesc.status, 404);
  EXPECT_EQ(nodesc.body, "");

  // update through PUT: the same name now runs another image.
  ASSERT_EQ(node.Cli("PUT", "/system/functions", Deployment(fn1, "faasnode/hello:latest")).status, 200);
  Http updated = node.Plain("GET", "/function/" + fn1 + "?name=bob");
  EXPECT_NE(updated.body.find("bob"), std::string::npos) << updated.body;

  // secrets: create (value and rawValue), list (no values), a function reads one, remove.
  EXPECT_EQ(node.Cli("POST", "/system/secrets", R"({"name":")" + key + R"(","value":"s3cret"})").status, 200);
  EXPECT_EQ(node.Cli("PUT", "/system/secrets", R"({"name":")" + key + R"(","rawValue":"bmV3LXZhbHVl"})").status, 200);
  Http secrets = node.Cli("GET", "/system/secrets?namespace=openfaas-fn");
  ASSERT_EQ(secrets.status, 200);
  if (!node.external()) {
    EXPECT_EQ(secrets.body, R"([{"name":"api-key","namespace":"openfaas-fn"}])");
  } else {
    EXPECT_NE(secrets.body.find(R"({"name":")" + key + R"(","namespace":"openfaas-fn"})"), std::string::npos)
        << secrets.body;
  }
  // An exec function (envProcess: a command on the host) that lists the secret reads it from
  // the directory its env names.
  Http reader_deploy = node.Cli("POST", "/system/functions",
                                R"({"service":")" + reader + R"(","image":"ghcr.io/example/sh:1","envProcess":"sh",)"
                                R"("secrets":[")" + key + R"("],"labels":null,"annotations":null})");
  ASSERT_EQ(reader_deploy.status, 200) << reader_deploy.body << node.Log();
  Http read = node.Plain("POST", "/function/" + reader, "cat \"$FAASNODE_SECRETS_DIR/" + key + "\"");
  EXPECT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.body, "new-value");
  // logs: what faas-cli logs NAME shows — the child's stderr and the watchdog's lines, NDJSON
  // that ends when follow=false.
  Http noisy = node.Plain("POST", "/function/" + reader, "echo from-stderr-7 >&2; echo out");
  EXPECT_EQ(noisy.status, 200) << noisy.body;
  Http logs = node.Cli("GET", "/system/logs?name=" + reader + "&namespace=openfaas-fn&follow=false");
  ASSERT_EQ(logs.status, 200) << logs.body;
  bool saw_stderr = false, saw_fork = false;
  std::istringstream lines(logs.body);
  for (std::string line; std::getline(lines, line);) {
    Json m = Parse(line);
    ASSERT_TRUE(m.is_object()) << line;
    EXPECT_EQ(m["name"], reader);
    EXPECT_EQ(m["namespace"], "openfaas-fn");
    EXPECT_TRUE(m["timestamp"].is_string()) << line;
    const std::string text = m["text"].get<std::string>();
    saw_stderr |= text.find("from-stderr-7") != std::string::npos;
    saw_fork |= text.find("Forking fprocess.") != std::string::npos;
  }
  EXPECT_TRUE(saw_stderr) << logs.body;
  EXPECT_TRUE(saw_fork) << logs.body;
  std::filesystem::perms mode = std::filesystem::status(node.state_dir() + "/secrets/openfaas-fn/" + key).permissions();
  EXPECT_EQ(mode, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(node.Cli("DELETE", "/system/secrets", R"({"name":")" + key + R"("})").status, 200);
  EXPECT_EQ(node.Cli("DELETE", "/system/secrets", R"({"name":")" + key + R"("})").status, 404);

  // remove: 200, then 404 "No existing function to remove" on the client's side.
  EXPECT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":")" + fn1 + R"("})").status, 200);
  Http gone = node.Cli("DELETE", "/system/functions", R"({"functionName":")" + fn1 + R"("})");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.body, "function " + fn1 + ".openfaas-fn not found\n");
  EXPECT_EQ(node.Plain("POST", "/function/" + fn1, "x").status, 404);
  EXPECT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":")" + reader + R"("})").status, 200);
}

TEST(FaasCliFlow, NamespacesScaleInfoAndOpenRoutes) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node;
  const std::string devns = node.Name("dev"), fn = node.Name("fn");
  if (!node.external()) {
    EXPECT_EQ(node.Cli("GET", "/system/namespaces").body, R"(["openfaas-fn"])");
  }
  EXPECT_EQ(node.Cli("POST", "/system/namespace/", R"({"name":")" + devns + R"("})").body,
            "request does not have openfaas=1 label\n");
  const std::string dev = R"({"name":")" + devns + R"(","labels":{"openfaas":"1"}})";
  EXPECT_EQ(node.Cli("POST", "/system/namespace/", dev).status, 201);
  Http dup = node.Cli("POST", "/system/namespace/", dev);
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(dup.body, "namespace " + devns + " already exists\n");
  if (!node.external()) {
    EXPECT_EQ(node.Cli("GET", "/system/namespaces").body, R"(["openfaas-fn","dev"])");
  } else {
    EXPECT_NE(node.Cli("GET", "/system/namespaces").body.find("\"" + devns + "\""), std::string::npos);
  }
  EXPECT_EQ(node.Cli("GET", "/system/namespace/" + devns).body, dev);
  EXPECT_EQ(node.Cli("GET", "/system/namespace/prod-never-made").status, 404);
  EXPECT_EQ(node.Cli("PUT", "/system/namespace/" + devns, R"({"name":"other","labels":{"openfaas":"1"}})").status, 400);
  EXPECT_EQ(node.Cli("PUT", "/system/namespace/" + devns,
                     R"({"name":")" + devns + R"(","labels":{"openfaas":"1","team":"a"}})")
                .status,
            202);
  EXPECT_EQ(node.Cli("GET", "/system/functions?namespace=prod-never-made").body, "namespace not valid\n");
  std::string in_dev = Deployment(fn, "faasnode/echo:latest");
  in_dev.replace(in_dev.find("openfaas-fn"), 11, devns);
  ASSERT_EQ(node.Cli("POST", "/system/functions", in_dev).status, 200);
  EXPECT_EQ(node.Plain("POST", "/function/" + fn + "." + devns, "in dev").body, "in dev");
  EXPECT_EQ(node.Plain("POST", "/function/" + fn, "x").status, 404) << "fn lives in dev only";
  Json devlist = Parse(node.Cli("GET", "/system/functions?namespace=" + devns).body);
  ASSERT_EQ(devlist.size(), 1u);
  EXPECT_EQ(devlist[0]["namespace"], devns);
  Http busy = node.Cli("DELETE", "/system/namespace/" + devns, dev);
  EXPECT_EQ(busy.status, 400) << busy.body;

  // scale: warm instances up to com.openfaas.scale.max (3); the body names the function.
  const std::string scale = "/system/scale-function/" + fn;
  auto replicas = [&](int n) {
    return R"({"serviceName":")" + fn + R"(","replicas":)" + std::to_string(n) + R"(,"namespace":")" + devns + R"("})";
  };
  EXPECT_EQ(node.Cli("POST", scale, replicas(2)).status, 200);
  EXPECT_EQ(Parse(node.Cli("GET", "/system/function/" + fn + "?namespace=" + devns).body)["availableReplicas"], 2);
  EXPECT_EQ(node.Cli("POST", scale, replicas(9)).status, 200);
  EXPECT_EQ(Parse(node.Cli("GET", "/system/function/" + fn + "?namespace=" + devns).body)["availableReplicas"], 3);
  // replicas 0: the gateway clamps it to 1 before faasd sees it; 200, one instance stays.
  EXPECT_EQ(node.Cli("POST", scale, replicas(0)).status, 200);
  EXPECT_GE(Parse(node.Cli("GET", "/system/function/" + fn + "?namespace=" + devns).body)["availableReplicas"], 1);
  Http ghost = node.Cli("POST", "/system/scale-function/ghost", R"({"serviceName":"ghost","replicas":1})");
  EXPECT_EQ(ghost.status, 404);
  EXPECT_EQ(ghost.body, "function: ghost.openfaas-fn not found\n");
  EXPECT_EQ(node.Cli("POST", scale, R"({"replicas":"two"})").status, 400);
  EXPECT_EQ(node.Cli("GET", scale).status, 405);

  ASSERT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":")" + fn + R"(","namespace":")" + devns + R"("})")
                .status,
            200);
  EXPECT_EQ(node.Cli("DELETE", "/system/namespace/" + devns, dev).status, 202);
  EXPECT_EQ(node.Cli("GET", "/system/namespace/" + devns).status, 404);
  EXPECT_EQ(node.Cli("DELETE", "/system/namespace/" + devns, dev).status, 404);

  Json info = Parse(node.Cli("GET", "/system/info").body);
  EXPECT_EQ(info["provider"]["provider"], "faasnode");
  EXPECT_NE(info["provider"]["orchestration"].get<std::string>().find("no containers"), std::string::npos);
  EXPECT_FALSE(info["version"]["release"].get<std::string>().empty());
  EXPECT_FALSE(info["version"]["sha"].get<std::string>().empty());
  EXPECT_EQ(node.Plain("GET", "/system/info").status, 401);
  EXPECT_EQ(node.Plain("GET", "/system/namespaces").status, 401);
  EXPECT_EQ(node.Plain("GET", "/healthz").status, 200) << "open, as behind the gateway";
  EXPECT_EQ(node.Cli("PATCH", "/system/functions", "{}").status, 405);
  // A path no route knows: Go's mux text.
  Http unknown = node.Plain("GET", "/system/nothing-here");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body, "404 page not found\n");
}

// configs/stack.yml (read with python3-yaml, as faas-cli reads it with go-yaml) deployed with
// exactly the requests `faas-cli deploy -f configs/stack.yml` sends (proxy/deploy.go: PUT, then
// POST on 404; the FunctionDeployment as faas-cli builds it), then every function invoked as
// `faas-cli invoke NAME` does.
TEST(FaasCliFlow, StackYmlDeploysAndEveryFunctionAnswers) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  if (::Run("python3 -c 'import yaml'").exit_code != 0) {
    GTEST_SKIP() << "python3-yaml is not installed (scripts/setup.sh installs it)";
  }
  const auto yaml = ::Run("python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' " +
                        std::string(FAASNODE_STACK_YML));
  ASSERT_EQ(yaml.exit_code, 0) << yaml.output;
  const Json stack = Parse(yaml.output);
  ASSERT_TRUE(stack.is_object()) << yaml.output;
  // What faas-cli's stack parser insists on (stack/stack.go ParseYAMLData).
  EXPECT_EQ(stack["provider"]["name"], "openfaas");
  if (stack.contains("version")) {
    EXPECT_EQ(stack["version"].dump(), "1.0");
  }
  ASSERT_TRUE(stack["functions"].is_object());
  ASSERT_FALSE(stack["functions"].empty());

  Node node;
  // go-yaml decodes scalars into map[string]string as their text.
  auto text = [](const Json& v) { return v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "true" : "false") : v.dump(); };
  auto string_map = [&](const Json& f, const char* key) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    if (f.contains(key) && f[key].is_object()) {
      for (const auto& [k, v] : f[key].items()) m[k] = text(v);
    }
    return m;
  };
  std::vector<std::string> created;
  for (const auto& [name, f] : stack["functions"].items()) {
    // proxy.DeployFunction: types.FunctionDeployment marshalled by encoding/json, in its field
    // order, omitempty; labels and annotations are always sent (pointers to maps faas-cli
    // makes, {} when the stack has none); limits/requests only with a memory or cpu.
    nlohmann::ordered_json d;
    d["service"] = name;
    d["image"] = f.value("image", "");
    if (f.contains("namespace")) d["namespace"] = f["namespace"];
    if (f.contains("fprocess")) d["envProcess"] = f["fprocess"];
    if (auto env = string_map(f, "environment"); !env.empty()) d["envVars"] = env;
    if (f.contains("constraints")) d["constraints"] = f["constraints"];
    if (f.contains("secrets")) d["secrets"] = f["secrets"];
    d["labels"] = string_map(f, "labels");
    d["annotations"] = string_map(f, "annotations");
    for (const char* res : {"limits", "requests"}) {
      if (auto r = string_map(f, res); r.contains("memory") || r.contains("cpu")) {
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        if (r.contains("memory")) out["memory"] = r["memory"];
        if (r.contains("cpu")) out["cpu"] = r["cpu"];
        d[res] = out;
      }
    }
    if (f.value("readonly_root_filesystem", false)) d["readOnlyRootFilesystem"] = true;
    Http put = node.Cli("PUT", "/system/functions", d.dump());
    if (put.status == 404) {
      Http post = node.Cli("POST", "/system/functions", d.dump());
      EXPECT_TRUE(post.status == 200 || post.status == 201 || post.status == 202)
          << name << ": POST " << post.status << " " << post.body << "\n" << d.dump() << "\n" << node.Log();
      created.push_back(name);
    } else {
      EXPECT_TRUE(put.status == 200 || put.status == 201 || put.status == 202)
          << name << ": PUT " << put.status << " " << put.body << "\n" << d.dump();
    }
    // faas-cli describe NAME: what was deployed is what the stack says.
    Json desc = Parse(node.Cli("GET", "/system/function/" + name + "?usage=1").body);
    ASSERT_TRUE(desc.is_object()) << name;
    EXPECT_EQ(desc["image"], d["image"]) << name;
    EXPECT_GE(desc.value("availableReplicas", 0), 1) << name << ": Ready";
    for (const auto& [k, v] : d["labels"].items()) EXPECT_EQ(desc["labels"][k], v) << name << " label " << k;
    for (const auto& [k, v] : d["annotations"].items()) EXPECT_EQ(desc["annotations"][k], v) << name << " annotation " << k;
    if (d.contains("envVars")) {
      EXPECT_EQ(Json(desc["envVars"]).dump(), Json(d["envVars"]).dump()) << name;
    }
    if (d.contains("envProcess")) {
      EXPECT_EQ(desc["envProcess"], d["envProcess"]) << name;
    }
  }
  // faas-cli list: every function with its limits.
  Json list = Parse(node.Cli("GET", "/system/functions").body);
  ASSERT_TRUE(list.is_array());
  std::map<std::string, Json> listed;
  for (const auto& f : list) listed[f["name"].get<std::string>()] = f;
  for (const auto& [name, f] : stack["functions"].items()) {
    ASSERT_TRUE(listed.contains(name)) << name << " missing from " << list.dump();
    if (f.contains("limits") && f["limits"].contains("memory")) {
      EXPECT_EQ(listed[name]["limits"]["memory"], f["limits"]["memory"]) << name;
    }
  }

  // faas-cli invoke NAME [--query k=v] < body: POST /function/NAME.openfaas-fn, text/plain, no auth.
  struct Call {
    std::string query, body, expect;
  };
  const std::map<std::string, Call> calls = {
      {"echo-fn", {"", "hi there", "hi there"}},
      {"hello-fn", {"", "", "hello, world!\n"}},  // GREETING from the stack's environment
      {"json-stats-fn", {"", "[1,2,3]", "\"count\":3"}},
      {"sha256-fn", {"", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"}},
      {"sleep-fn", {"?ms=5", "", ""}},
      {"cpu-burn-fn", {"?rounds=10", "", "\"rounds\":10"}},
      {"wc-fn", {"", "one\ntwo\n", "2"}},
  };
  for (const auto& [name, f] : stack["functions"].items()) {
    auto it = calls.find(name);
    if (it == calls.end()) {
      ADD_FAILURE() << name << " is in configs/stack.yml but this test has no invocation for it; add one";
      continue;
    }
    const std::string ns = f.value("namespace", "openfaas-fn");
    Http r = node.Plain("POST", "/function/" + name + "." + ns + it->second.query, it->second.body,
                        "-H 'Content-Type: text/plain'");
    EXPECT_EQ(r.status, 200) << name << ": " << r.body << "\n" << node.Log();
    EXPECT_NE(r.body.find(it->second.expect), std::string::npos) << name << ": " << r.body;
  }
  // On an external node, what this test made goes again (what was there stays, updated).
  for (const std::string& name : created) {
    if (node.external()) {
      EXPECT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":")" + name + R"("})").status, 200);
    }
  }
}

// Acknowledged changes survive kill -9: functions (native, exec, another namespace), their
// secrets, namespaces; all answer again after the restart.
TEST(FaasCliFlow, EverythingAcknowledgedSurvivesKill9) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  if (std::getenv("FAASNODE_URL") != nullptr && *std::getenv("FAASNODE_URL") != '\0') {
    GTEST_SKIP() << "kill -9 needs a node of the test's own (FAASNODE_URL is set)";
  }
  Node node;
  ASSERT_EQ(node.Cli("POST", "/system/namespace/", R"({"name":"team","labels":{"openfaas":"1"}})").status, 201);
  ASSERT_EQ(node.Cli("POST", "/system/secrets", R"({"name":"k","value":"kept"})").status, 200);
  ASSERT_EQ(node.Cli("POST", "/system/functions", Deployment("n1", "faasnode/echo:latest")).status, 200);
  std::string ex = Deployment("x1", "ghcr.io/example/cat:1", "");
  ex.replace(ex.find(R"("envProcess":"")"), 15, R"("envProcess":"cat")");
  ex.replace(ex.find(R"("envVars":{})"), 12, R"("envVars":{"MODE":"fast"})");
  ASSERT_EQ(node.Cli("POST", "/system/functions", ex).status, 200) << node.Log();
  std::string team = Deployment("t1", "faasnode/hello:latest");
  team.replace(team.find("openfaas-fn"), 11, "team");
  ASSERT_EQ(node.Cli("POST", "/system/functions", team).status, 200);
  ASSERT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":"hello"})").status, 200);
  const std::string before = node.Cli("GET", "/system/functions").body;
  const std::string before_team = node.Cli("GET", "/system/functions?namespace=team").body;

  node.Stop(SIGKILL);
  node.Start();
  Json after = Parse(node.Cli("GET", "/system/functions").body);
  Json was = Parse(before);
  ASSERT_EQ(after.size(), was.size()) << after.dump() << "\nwas " << before;
  for (std::size_t i = 0; i < was.size(); ++i) {
    was[i].erase("invocationCount");  // counters restart with the node, as the gateway's do
    after[i].erase("invocationCount");
    EXPECT_EQ(after[i], was[i]);
  }
  EXPECT_EQ(Parse(node.Cli("GET", "/system/functions?namespace=team").body), Parse(before_team));
  EXPECT_EQ(node.Plain("POST", "/function/n1", "one").body, "one");
  EXPECT_EQ(node.Plain("POST", "/function/x1", "two").body, "two");
  EXPECT_NE(node.Plain("GET", "/function/t1.team?name=ann").body.find("ann"), std::string::npos);
  EXPECT_EQ(node.Plain("GET", "/function/hello").status, 404) << "a removal is durable too";
  EXPECT_EQ(node.Cli("GET", "/system/secrets").body, R"([{"name":"k","namespace":"openfaas-fn"}])");
  EXPECT_EQ(node.Cli("GET", "/system/namespaces").body, R"(["openfaas-fn","team"])");
}

// Bad input: the documented status and a message that names the problem; nothing stored changes.
TEST(FaasCliFlow, BadInputIsRefusedAndChangesNothing) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node;
  const std::string kept = node.Name("k");
  ASSERT_EQ(node.Cli("POST", "/system/secrets", R"({"name":")" + kept + R"(","value":"v"})").status, 200);
  // echo has served a call: a refused update must leave its instance and its count too.
  ASSERT_EQ(node.Plain("POST", "/function/echo", "warm").body, "warm");
  const std::string functions = node.Cli("GET", "/system/functions").body;
  const std::string secrets = node.Cli("GET", "/system/secrets").body;
  struct Case {
    const char* method;
    const char* path;
    std::string body;
    int status;
    const char* says;
  };
  const std::string big(2 << 20, 'x');
  const Case cases[] = {
      {"POST", "/system/functions", R"({"service":"a","image":)", 400, "malformed JSON"},
      {"POST", "/system/functions", R"({"service":7,"image":"faasnode/echo:latest"})", 400, "field 'service' must be a string"},
      {"POST", "/system/functions", R"({"service":"a","image":"faasnode/echo:latest","labels":["x"]})", 400, "field 'labels'"},
      {"POST", "/system/functions", R"({"service":"a","image":"faasnode/echo:latest","envVars":{"A":1}})", 400, "envVars.A"},
      {"POST", "/system/functions", R"({"service":"Bad_Name","image":"faasnode/echo:latest"})", 400, "function name"},
      {"POST", "/system/functions", R"({"service":"a/b","image":"faasnode/echo:latest"})", 400, "function name"},
      {"POST", "/system/functions", R"({"service":"..","image":"faasnode/echo:latest"})", 400, "function name"},
      {"POST", "/system/functions", R"({"service":"a","image":"../../etc/passwd"})", 400, "not a native function"},
      {"POST", "/system/functions", R"({"service":"a","image":"faasnode/echo:latest","secrets":["nope"]})", 400, "unable to find secret: nope"},
      {"POST", "/system/functions", R"({"service":"a","image":"faasnode/echo:latest","labels":{"com.openfaas.scale.max":"lots"}})", 400, "com.openfaas.scale.max"},
      {"POST", "/system/functions", R"({"service":"a","image":"faasnode/echo:latest","limits":{"memory":"huge"}})", 400, "limits.memory"},
      {"POST", "/system/functions", R"({"service":"a","image":"faasnode/echo:latest","namespace":"nowhere"})", 400, "namespace not valid"},
      {"POST", "/system/functions", "{\"service\":\"a\",\"image\":\"" + big + "\"}", 413, "larger than"},
      {"PUT", "/system/functions", R"({"service":"echo","image":"faasnode/nothing:latest"})", 400, "not a native function"},
      {"DELETE", "/system/functions", R"({"functionName":5})", 400, "functionName"},
      {"DELETE", "/system/functions", "[]", 400, "expected a JSON object"},
      {"POST", "/system/secrets", R"({"name":"a/b","value":"v"})", 400, "directory traversal found in name"},
      {"POST", "/system/secrets", R"({"name":"..","value":"v"})", 400, "directory traversal found in name"},
      {"POST", "/system/secrets", R"({"name":"","value":"v"})", 400, "non-empty name is required"},
      {"POST", "/system/secrets", R"({"name":"k","rawValue":"%%%"})", 400, "base64"},
      {"POST", "/system/secrets", R"({"name":"k","value":4})", 400, "field 'value' must be a string"},
      {"PUT", "/system/secrets", "not json", 400, "malformed JSON"},
      {"DELETE", "/system/secrets", R"({"name":"../k"})", 400, "directory traversal"},
      {"POST", "/system/secrets", R"({"name":"a b","value":"v"})", 400, "secret name \"a b\" is not valid"},
      {"PUT", "/system/secrets", R"({"name":"x$y","value":"v"})", 400, "[-a-zA-Z_0-9.]"},
      {"PATCH", "/system/nowhere", "", 404, "404 page not found"},
  };
  for (const Case& c : cases) {
    Http r = node.Cli(c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << " " << c.body.substr(0, 120) << " -> " << r.body;
    EXPECT_NE(r.body.find(c.says), std::string::npos) << c.body.substr(0, 120) << " -> " << r.body;
    EXPECT_NE(r.headers.find("text/plain"), std::string::npos) << r.headers;
  }
  EXPECT_EQ(node.Cli("GET", "/system/functions").body, functions) << "nothing deployed or changed";
  EXPECT_EQ(node.Cli("GET", "/system/secrets").body, secrets);
  EXPECT_EQ(node.Plain("POST", "/function/echo", "still").body, "still") << "the failed PUT left echo as it was";
  EXPECT_EQ(node.Cli("DELETE", "/system/secrets", R"({"name":")" + kept + R"("})").status, 200);
}

}  // namespace
