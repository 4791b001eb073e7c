// state_test.cc — the state database (schema, durability across reopen, versions), secret
// files (0600, traversal refused, materialised per deployment) and FunctionDeployment JSON.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "faasd-shim/state/function_spec.h"
#include "faasd-shim/state/secret_store.h"
#include "faasd-shim/state/state_db.h"

namespace faasnode::state {
namespace {

std::string FreshDir(const char* tag) {
  std::string d = ::testing::TempDir() + "/state-" + tag + "-" + std::to_string(getpid());
  std::system(("rm -rf " + d).c_str());
  return d;
}

TEST(StateDb, CreatesTheSchemaOnceAndKeepsRecordsAcrossReopen) {
  const std::string d = FreshDir("reopen") + "/nested/dir";
  {
    auto db = StateDb::Open(d);
    ASSERT_TRUE(db.has_value()) << db.error().message();
    EXPECT_TRUE((*db)->created());
    ASSERT_TRUE((*db)->PutFunction({"openfaas-fn", "echo", "{\"a\":1}", 42}).has_value());
    ASSERT_TRUE((*db)->PutFunction({"openfaas-fn", "echo", "{\"a\":2}", 43}).has_value()) << "put replaces";
    ASSERT_TRUE((*db)->PutFunction({"dev", "b", "{}", 1}).has_value());
    ASSERT_TRUE((*db)->PutNamespace({"dev", "{\"openfaas\":\"1\"}", "{}"}).has_value());
    ASSERT_TRUE((*db)->PutSecret("openfaas-fn", "k").has_value());
    ASSERT_TRUE((*db)->PutSecret("openfaas-fn", "k").has_value());
  }
  auto db = StateDb::Open(d);
  ASSERT_TRUE(db.has_value());
  EXPECT_FALSE((*db)->created());
  auto fns = (*db)->Functions();
  ASSERT_TRUE(fns.has_value());
  ASSERT_EQ(fns->size(), 2u);
  EXPECT_EQ((*fns)[0].ns, "dev");
  EXPECT_EQ((*fns)[1].spec_json, "{\"a\":2}");
  EXPECT_EQ((*fns)[1].created_ns, 43);
  EXPECT_EQ((*db)->Namespaces()->size(), 1u);
  EXPECT_EQ(*(*db)->Secrets("openfaas-fn"), std::vector<std::string>{"k"});
  auto missing = (*db)->DeleteFunction("openfaas-fn", "nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), junction::ErrorCode::kNotFound);
  EXPECT_TRUE((*db)->DeleteFunction("dev", "b").has_value());
  EXPECT_EQ((*db)->Functions()->size(), 1u);
  struct stat st;
  ASSERT_EQ(stat((d + "/state.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(StateDb, AFailedTransactionChangesNothingAndANewerSchemaIsRefused) {
  const std::string d = FreshDir("tx");
  auto db = StateDb::Open(d);
  ASSERT_TRUE(db.has_value());
  auto r = (*db)->Transaction([](energy::SqliteDb& s) -> junction::Status<void> {
    if (auto e = s.Exec("INSERT INTO functions VALUES ('ns', 'x', '{}', 1)"); !e) return e;
    return junction::MakeError(junction::ErrorCode::kInternal, "stop");
  });
  EXPECT_FALSE(r.has_value());
  EXPECT_TRUE((*db)->Functions()->empty()) << "rolled back";
  ASSERT_TRUE((*db)->Transaction([](energy::SqliteDb& s) { return s.Exec("PRAGMA user_version = 99"); }).has_value());
  db->reset();
  auto newer = StateDb::Open(d);
  ASSERT_FALSE(newer.has_value());
  EXPECT_NE(newer.error().message().find("newer"), std::string::npos) << newer.error().message();
  std::ofstream(FreshDir("junk")) << "x";
  const std::string junk = FreshDir("junkdir");
  mkdir(junk.c_str(), 0700);
  std::ofstream(junk + "/state.db") << "this is not a database, not at all, no";
  EXPECT_FALSE(StateDb::Open(junk).has_value());
}

TEST(SecretStore, WritesValuesWith0600RefusesTraversalAndMaterialises) {
  const std::string d = FreshDir("secrets");
  auto db = StateDb::Open(d);
  ASSERT_TRUE(db.has_value());
  SecretStore s(db->get());
  ASSERT_TRUE(s.Put("openfaas-fn", "api-key", "v1").has_value());
  ASSERT_TRUE(s.Put("openfaas-fn", "api-key", "v2").has_value());
  EXPECT_EQ(*s.Value("openfaas-fn", "api-key"), "v2");
  struct stat st;
  ASSERT_EQ(stat(s.PathOf("openfaas-fn", "api-key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const char* bad : {"", "a/b", "..", "x..y", "../etc"}) {
    auto r = s.Put("openfaas-fn", bad, "v");
    ASSERT_FALSE(r.has_value()) << bad;
  }
  EXPECT_EQ(SecretStore::ValidateName("a/b").error().message(), "directory traversal found in name");
  EXPECT_EQ(SecretStore::ValidateName("").error().message(), "non-empty name is required");
  EXPECT_EQ(*s.List("openfaas-fn"), std::vector<std::string>{"api-key"});
  auto m = s.Materialize("openfaas-fn", "fn", {"api-key"});
  ASSERT_TRUE(m.has_value()) << m.error().message();
  std::ifstream f(m->dir + "/api-key");
  std::string v((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(v, "v2");
  ASSERT_EQ(m->values.size(), 1u);
  auto missing = s.Materialize("openfaas-fn", "fn", {"api-key", "nope"});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message(), "unable to find secret: nope");
  EXPECT_TRUE(s.Remove("openfaas-fn", "api-key").has_value());
  EXPECT_FALSE(s.Exists("openfaas-fn", "api-key"));
  EXPECT_EQ(s.Remove("openfaas-fn", "api-key").error().code(), junction::ErrorCode::kNotFound);
  s.Forget("openfaas-fn", "fn");
  EXPECT_NE(access(m->dir.c_str(), F_OK), 0);
}

TEST(FunctionSpec, ParsesWhatFaasCliSendsAndNamesTheBadField) {
  auto s = ParseFunctionDeployment(R"({"service":"echo","image":"faasnode/echo:latest","envProcess":"",
    "envVars":{"A":"1"},"labels":null,"annotations":{"topic":"demo"},"secrets":["k"],
    "limits":{"memory":"64Mi"},"requests":null,"readOnlyRootFilesystem":true,"unknown":[1,2]})");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(s->service, "echo");
  EXPECT_EQ(s->env_vars.at("A"), "1");
  EXPECT_TRUE(s->labels.empty());
  EXPECT_EQ(s->annotations.at("topic"), "demo");
  ASSERT_TRUE(s->limits.has_value());
  EXPECT_EQ(s->limits->memory, "64Mi");
  EXPECT_FALSE(s->requests.has_value());
  EXPECT_TRUE(s->read_only_root_filesystem);
  auto back = FromStoredJson(ToStoredJson(*s));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->annotations, s->annotations);
  EXPECT_EQ(back->limits->memory, "64Mi");

  const std::pair<const char*, const char*> bad[] = {
      {"{\"service\": 5}", "field 'service' must be a string"},
      {"{\"labels\": [\"a\"]}", "field 'labels' must be an object"},
      {"{\"envVars\": {\"A\": 1}}", "field 'envVars.A' must be a string"},
      {"{\"secrets\": \"k\"}", "field 'secrets' must be an array"},
      {"{\"readOnlyRootFilesystem\": \"yes\"}", "must be true or false"},
      {"{\"service\": \"x\"", "malformed JSON"},
      {"[]", "expected a JSON object"},
      {"", "malformed JSON"},
  };
  for (const auto& [body, want] : bad) {
    auto r = ParseFunctionDeployment(body);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_NE(r.error().message().find(want), std::string::npos) << body << " -> " << r.error().message();
  }
  auto scale = ParseScaleServiceRequest(R"({"serviceName":"x","replicas":-1})");
  ASSERT_FALSE(scale.has_value());
  EXPECT_NE(scale.error().message().find("replicas"), std::string::npos);
  auto secret = ParseSecretRequest(R"({"name":"k","rawValue":"aGVsbG8="})");
  ASSERT_TRUE(secret.has_value());
  EXPECT_EQ(secret->raw_value, "hello");
  EXPECT_FALSE(ParseSecretRequest(R"({"name":"k","rawValue":"###"})").has_value());
}

TEST(FunctionSpec, TimesRenderAsGoDoes) {
  EXPECT_EQ(Rfc3339Nano(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc3339Nano(1'700'000'000'123'000'000), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(Rfc3339Nano(1'700'000'000'000'000'001), "2023-11-14T22:13:20.000000001Z");
}

}  // namespace
}  // namespace faasnode::state
