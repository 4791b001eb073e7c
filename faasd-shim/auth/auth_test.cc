// auth_test.cc — credential files (generated once, 0600, trimmed), the basic-auth check and
// the 401 reply, base64.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include "faasd-shim/auth/base64.h"
#include "faasd-shim/auth/basic_auth.h"

namespace faasnode::auth {
namespace {

std::string TempDir(const char* tag) {
  std::string d = ::testing::TempDir() + "/auth-" + tag + "-" + std::to_string(getpid());
  std::system(("rm -rf " + d).c_str());
  mkdir(d.c_str(), 0700);
  return d;
}

TEST(Base64, RoundTripsAndRefusesBadInput) {
  for (const std::string& s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\0\xff\x10", 3)}) {
    auto d = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(d.has_value()) << s;
    EXPECT_EQ(*d, s);
  }
  EXPECT_EQ(Base64Encode("admin:secret"), "YWRtaW46c2VjcmV0");
  EXPECT_FALSE(Base64Decode("abc").has_value());
  EXPECT_FALSE(Base64Decode("ab!d").has_value());
  EXPECT_FALSE(Base64Decode("a=bc").has_value());
  EXPECT_FALSE(Base64Decode("ab=c").has_value());
}

TEST(Credentials, GeneratedOnceWithMode0600AndReadTrimmed) {
  const std::string d = TempDir("gen");
  auto c = LoadOrCreateCredentials(d);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->user, "admin");
  EXPECT_EQ(c->password.size(), 63u);
  for (char ch : c->password) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch))) << ch;
  struct stat st;
  ASSERT_EQ(stat((d + "/basic-auth-password").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((d + "/basic-auth-user").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateCredentials(d);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->password, c->password) << "a second start keeps the password";
  std::ofstream(d + "/basic-auth-password") << "  hunter2\n";
  auto edited = LoadOrCreateCredentials(d);
  ASSERT_TRUE(edited.has_value());
  EXPECT_EQ(edited->password, "hunter2");
  std::ofstream(d + "/basic-auth-user") << "\n";
  EXPECT_FALSE(LoadOrCreateCredentials(d).has_value()) << "an empty user file is an error";
  EXPECT_NE(GeneratePassword(), GeneratePassword());
}

TEST(BasicAuth, ChecksTheHeaderAndAnswers401LikeFaasd) {
  const Credentials c{"admin", "secret"};
  EXPECT_TRUE(CheckBasicAuth(c, "Basic " + Base64Encode("admin:secret")));
  EXPECT_TRUE(CheckBasicAuth(c, "basic " + Base64Encode("admin:secret")));
  EXPECT_FALSE(CheckBasicAuth(c, "Basic " + Base64Encode("admin:secreT")));
  EXPECT_FALSE(CheckBasicAuth(c, "Basic " + Base64Encode("admin:secret2")));
  EXPECT_FALSE(CheckBasicAuth(c, "Basic " + Base64Encode("root:secret")));
  EXPECT_FALSE(CheckBasicAuth(c, "Basic " + Base64Encode("adminsecret")));
  EXPECT_FALSE(CheckBasicAuth(c, "Bearer " + Base64Encode("admin:secret")));
  EXPECT_FALSE(CheckBasicAuth(c, "Basic !!!!"));
  EXPECT_FALSE(CheckBasicAuth(c, ""));

  int ran = 0;
  Handler h = RequireBasicAuth(&c, [&](const junction::http::Request&, std::string_view, junction::http::Reply& r) {
    ++ran;
    r.status = 200;
  });
  junction::http::Request req;
  junction::http::Reply reply;
  h(req, {}, reply);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(reply.status, 401);
  EXPECT_EQ(reply.body, "invalid credentials");
  ASSERT_FALSE(reply.headers.empty());
  EXPECT_EQ(reply.headers[0].first, "WWW-Authenticate");
  EXPECT_EQ(reply.headers[0].second, "Basic realm=\"Restricted\"");
  const std::string good = "Basic " + Base64Encode("admin:secret");
  req.headers.Add("Authorization", good);
  junction::http::Reply ok;
  h(req, {}, ok);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(ok.status, 200);
}

}  // namespace
}  // namespace faasnode::auth
