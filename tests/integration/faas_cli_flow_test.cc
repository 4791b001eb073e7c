// faas_cli_flow_test.cc — the OpenFaaS API of the real `faasnode serve`, driven with curl
// exactly as faas-cli drives a faasd gateway (openfaas-api.md section 5.1): login, deploy
// (PUT, then POST on 404), list, describe, invoke without auth, secrets, namespaces, scale,
// remove; durability across kill -9; bad input that changes nothing.
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
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

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

// A node on loopback with its own state dir; Start/Kill9 can be repeated on the same dir.
class Node {
 public:
  Node() {
    port_ = FreePort();
    dir_ = ::testing::TempDir() + "/flow-" + std::to_string(getpid()) + "-" + std::to_string(port_);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = dir_ + "/node.toml";
    std::ofstream(config_) << "[runtime]\ncores = [0]\n[net]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
                           << "[state]\ndir = \"" << dir_ << "/state\"\n"
                           << "[energy]\nledger = \"" << dir_ << "/ledger.db\"\n"
                           << "[functions.echo]\n[functions.hello]\n";
    Start();
  }
  ~Node() { Stop(SIGTERM); }

  void Start() {
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
        std::ifstream pw(dir_ + "/state/basic-auth-password");
        std::getline(pw, password_);
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
  std::string Url(const std::string& path) const { return "'http://127.0.0.1:" + std::to_string(port_) + path + "'"; }
  std::string Log() const {
    std::ifstream f(dir_ + "/log");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  const std::string& password() const { return password_; }
  const std::string& dir() const { return dir_; }

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
  Http Exchange(const std::string& cmd) const {
    Http h;
    auto r = Run(cmd);
    h.status = std::atoi(r.output.c_str());
    std::ifstream hf(dir_ + "/h"), bf(dir_ + "/b");
    h.headers.assign(std::istreambuf_iterator<char>(hf), {});
    h.body.assign(std::istreambuf_iterator<char>(bf), {});
    return h;
  }

  int port_ = 0;
  pid_t pid_ = -1;
  std::string dir_, config_, password_;
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
  Http put = node.Cli("PUT", "/system/functions", Deployment("fn1", "faasnode/echo:latest"));
  EXPECT_EQ(put.status, 404);
  EXPECT_EQ(put.body, "function: fn1.openfaas-fn not found\n");
  Http post = node.Cli("POST", "/system/functions", Deployment("fn1", "faasnode/echo:latest"));
  ASSERT_EQ(post.status, 200) << post.body;
  EXPECT_EQ(post.body, "");
  Http again = node.Cli("POST", "/system/functions", Deployment("fn1", "faasnode/echo:latest"));
  EXPECT_EQ(again.status, 400) << "POST is create-only";
  EXPECT_NE(again.body.find("already exists"), std::string::npos) << again.body;

  // invoke: NAME.openfaas-fn, no Authorization, text/plain; path and query reach the function.
  Http inv = node.Plain("POST", "/function/fn1.openfaas-fn", "hello node", "-H 'Content-Type: text/plain'");
  ASSERT_EQ(inv.status, 200) << inv.body;
  EXPECT_EQ(inv.body, "hello node");
  EXPECT_NE(inv.headers.find("X-Call-Id: "), std::string::npos) << inv.headers;
  EXPECT_NE(inv.headers.find("X-Start-Time: "), std::string::npos);
  EXPECT_NE(inv.headers.find("X-Served-By: faasnode/"), std::string::npos);
  EXPECT_NE(inv.headers.find("X-Duration-Seconds: "), std::string::npos);
  Http given = node.Plain("GET", "/function/fn1", "", "-H 'X-Call-Id: my-call-7'");
  EXPECT_NE(given.headers.find("X-Call-Id: my-call-7"), std::string::npos) << given.headers;
  Http hello = node.Plain("GET", "/function/hello.openfaas-fn/some/path?name=ada");
  EXPECT_EQ(hello.status, 200);
  EXPECT_NE(hello.body.find("ada"), std::string::npos) << hello.body;
  for (const char* missing : {"/function/nope", "/function/nope.openfaas-fn", "/function/.openfaas-fn",
                              "/function/fn1.otherns"}) {
    Http nf = node.Plain("GET", missing);
    EXPECT_EQ(nf.status, 404) << missing;
    EXPECT_NE(nf.body.find("error finding function"), std::string::npos) << nf.body;
  }

  // list: invocationCount per function; describe: ?usage=1, availableReplicas > 0 = Ready.
  Json list = Parse(node.Cli("GET", "/system/functions").body);
  ASSERT_TRUE(list.is_array());
  bool found = false;
  for (const auto& f : list) {
    if (f["name"] != "fn1") continue;
    found = true;
    EXPECT_EQ(f["image"], "faasnode/echo:latest");
    EXPECT_EQ(f["namespace"], "openfaas-fn");
    EXPECT_EQ(f["invocationCount"], 2);
    EXPECT_EQ(f["labels"]["com.openfaas.scale.max"], "3");
    EXPECT_TRUE(f["annotations"].is_object());
    EXPECT_FALSE(f.contains("envVars")) << "omitempty";
    EXPECT_FALSE(f.contains("secrets")) << "omitempty";
    EXPECT_FALSE(f.contains("availableReplicas")) << "the list has none, as faasd's";
    EXPECT_TRUE(f["createdAt"].is_string());
  }
  EXPECT_TRUE(found) << list.dump();
  Http describe = node.Cli("GET", "/system/function/fn1?namespace=openfaas-fn&usage=1");
  ASSERT_EQ(describe.status, 200);
  Json d = Parse(describe.body);
  EXPECT_GE(d["availableReplicas"].get<int>(), 1) << describe.body;
  Http nodesc = node.Cli("GET", "/system/function/ghost?usage=1");
  EXPECT_EQ(nodesc.status, 404);
  EXPECT_EQ(nodesc.body, "");

  // update through PUT: the same name now runs another image.
  ASSERT_EQ(node.Cli("PUT", "/system/functions", Deployment("fn1", "faasnode/hello:latest")).status, 200);
  Http updated = node.Plain("GET", "/function/fn1?name=bob");
  EXPECT_NE(updated.body.find("bob"), std::string::npos) << updated.body;

  // secrets: create (value and rawValue), list (no values), a function reads one, remove.
  EXPECT_EQ(node.Cli("POST", "/system/secrets", R"({"name":"api-key","value":"s3cret"})").status, 200);
  EXPECT_EQ(node.Cli("PUT", "/system/secrets", R"({"name":"api-key","rawValue":"bmV3LXZhbHVl"})").status, 200);
  Http secrets = node.Cli("GET", "/system/secrets?namespace=openfaas-fn");
  ASSERT_EQ(secrets.status, 200);
  EXPECT_EQ(secrets.body, R"([{"name":"api-key","namespace":"openfaas-fn"}])");
  // An exec function (envProcess: a command on the host) that lists the secret reads it from
  // the directory its env names.
  Http reader = node.Cli("POST", "/system/functions",
                         R"({"service":"reader","image":"ghcr.io/example/sh:1","envProcess":"sh",)"
                         R"("secrets":["api-key"],"labels":null,"annotations":null})");
  ASSERT_EQ(reader.status, 200) << reader.body << node.Log();
  Http read = node.Plain("POST", "/function/reader", "cat \"$FAASNODE_SECRETS_DIR/api-key\"");
  EXPECT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.body, "new-value");
  // logs: what faas-cli logs NAME shows — the child's stderr and the watchdog's lines, NDJSON
  // that ends when follow=false.
  Http noisy = node.Plain("POST", "/function/reader", "echo from-stderr-7 >&2; echo out");
  EXPECT_EQ(noisy.status, 200) << noisy.body;
  Http logs = node.Cli("GET", "/system/logs?name=reader&namespace=openfaas-fn&follow=false");
  ASSERT_EQ(logs.status, 200) << logs.body;
  bool saw_stderr = false, saw_fork = false;
  std::istringstream lines(logs.body);
  for (std::string line; std::getline(lines, line);) {
    Json m = Parse(line);
    ASSERT_TRUE(m.is_object()) << line;
    EXPECT_EQ(m["name"], "reader");
    EXPECT_EQ(m["namespace"], "openfaas-fn");
    EXPECT_TRUE(m["timestamp"].is_string()) << line;
    const std::string text = m["text"].get<std::string>();
    saw_stderr |= text.find("from-stderr-7") != std::string::npos;
    saw_fork |= text.find("Forking fprocess.") != std::string::npos;
  }
  EXPECT_TRUE(saw_stderr) << logs.body;
  EXPECT_TRUE(saw_fork) << logs.body;
  std::filesystem::perms mode = std::filesystem::status(node.dir() + "/state/secrets/openfaas-fn/api-key").permissions();
  EXPECT_EQ(mode, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(node.Cli("DELETE", "/system/secrets", R"({"name":"api-key"})").status, 200);
  EXPECT_EQ(node.Cli("DELETE", "/system/secrets", R"({"name":"api-key"})").status, 404);

  // remove: 200, then 404 "No existing function to remove" on the client's side.
  EXPECT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":"fn1"})").status, 200);
  Http gone = node.Cli("DELETE", "/system/functions", R"({"functionName":"fn1"})");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.body, "function fn1.openfaas-fn not found\n");
  EXPECT_EQ(node.Plain("POST", "/function/fn1", "x").status, 404);
}

TEST(FaasCliFlow, NamespacesScaleInfoAndOpenRoutes) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  Node node;
  EXPECT_EQ(node.Cli("GET", "/system/namespaces").body, R"(["openfaas-fn"])");
  EXPECT_EQ(node.Cli("POST", "/system/namespace/", R"({"name":"dev"})").body,
            "request does not have openfaas=1 label\n");
  const std::string dev = R"({"name":"dev","labels":{"openfaas":"1"}})";
  EXPECT_EQ(node.Cli("POST", "/system/namespace/", dev).status, 201);
  Http dup = node.Cli("POST", "/system/namespace/", dev);
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(dup.body, "namespace dev already exists\n");
  EXPECT_EQ(node.Cli("GET", "/system/namespaces").body, R"(["openfaas-fn","dev"])");
  EXPECT_EQ(node.Cli("GET", "/system/namespace/dev").body, R"({"name":"dev","labels":{"openfaas":"1"}})");
  EXPECT_EQ(node.Cli("GET", "/system/namespace/prod").status, 404);
  EXPECT_EQ(node.Cli("PUT", "/system/namespace/dev", R"({"name":"other","labels":{"openfaas":"1"}})").status, 400);
  EXPECT_EQ(node.Cli("PUT", "/system/namespace/dev", R"({"name":"dev","labels":{"openfaas":"1","team":"a"}})").status, 202);
  EXPECT_EQ(node.Cli("GET", "/system/functions?namespace=prod").body, "namespace not valid\n");
  std::string in_dev = Deployment("fn", "faasnode/echo:latest");
  in_dev.replace(in_dev.find("openfaas-fn"), 11, "dev");
  ASSERT_EQ(node.Cli("POST", "/system/functions", in_dev).status, 200);
  EXPECT_EQ(node.Plain("POST", "/function/fn.dev", "in dev").body, "in dev");
  EXPECT_EQ(node.Plain("POST", "/function/fn", "x").status, 404) << "fn lives in dev only";
  Json devlist = Parse(node.Cli("GET", "/system/functions?namespace=dev").body);
  ASSERT_EQ(devlist.size(), 1u);
  EXPECT_EQ(devlist[0]["namespace"], "dev");
  Http busy = node.Cli("DELETE", "/system/namespace/dev", dev);
  EXPECT_EQ(busy.status, 400) << busy.body;

  // scale: warm instances up to com.openfaas.scale.max (3); the body names the function.
  EXPECT_EQ(node.Cli("POST", "/system/scale-function/fn", R"({"serviceName":"fn","replicas":2,"namespace":"dev"})").status,
            200);
  EXPECT_EQ(Parse(node.Cli("GET", "/system/function/fn?namespace=dev").body)["availableReplicas"], 2);
  EXPECT_EQ(node.Cli("POST", "/system/scale-function/fn", R"({"serviceName":"fn","replicas":9,"namespace":"dev"})").status,
            200);
  EXPECT_EQ(Parse(node.Cli("GET", "/system/function/fn?namespace=dev").body)["availableReplicas"], 3);
  Http ghost = node.Cli("POST", "/system/scale-function/ghost", R"({"serviceName":"ghost","replicas":1})");
  EXPECT_EQ(ghost.status, 404);
  EXPECT_EQ(ghost.body, "function: ghost.openfaas-fn not found\n");
  EXPECT_EQ(node.Cli("POST", "/system/scale-function/fn", R"({"replicas":"two"})").status, 400);
  EXPECT_EQ(node.Cli("GET", "/system/scale-function/fn").status, 405);

  ASSERT_EQ(node.Cli("DELETE", "/system/functions", R"({"functionName":"fn","namespace":"dev"})").status, 200);
  EXPECT_EQ(node.Cli("DELETE", "/system/namespace/dev", dev).status, 202);
  EXPECT_EQ(node.Cli("GET", "/system/namespace/dev").status, 404);
  EXPECT_EQ(node.Cli("DELETE", "/system/namespace/dev", dev).status, 404);

  Json info = Parse(node.Cli("GET", "/system/info").body);
  EXPECT_EQ(info["provider"]["provider"], "faasnode");
  EXPECT_NE(info["provider"]["orchestration"].get<std::string>().find("no containers"), std::string::npos);
  EXPECT_FALSE(info["version"]["release"].get<std::string>().empty());
  EXPECT_FALSE(info["version"]["sha"].get<std::string>().empty());
  EXPECT_EQ(node.Plain("GET", "/system/info").status, 401);
  EXPECT_EQ(node.Plain("GET", "/system/namespaces").status, 401);
  EXPECT_EQ(node.Plain("GET", "/healthz").status, 200) << "open, as behind the gateway";
  EXPECT_EQ(node.Cli("PATCH", "/system/functions", "{}").status, 405);
}

// Acknowledged changes survive kill -9: functions (native, exec, another namespace), their
// secrets, namespaces; all answer again after the restart.
TEST(FaasCliFlow, EverythingAcknowledgedSurvivesKill9) {
  if (!HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
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
  ASSERT_EQ(node.Cli("POST", "/system/secrets", R"({"name":"k","value":"v"})").status, 200);
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
}

}  // namespace
