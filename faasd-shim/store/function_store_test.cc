// function_store_test.cc — FunctionStore: name rules (no escape), lookup, caching, listing.
#include "faasd-shim/store/function_store.h"

#include <gtest/gtest.h>

#include <string>

namespace faasnode::store {
namespace {

using junction::ErrorCode;

TEST(FunctionStoreTest, ValidNames) {
  for (std::string_view name : {"echo", "json-stats", "cpu-burn", "a", "x1", "swiglu-mlp"}) {
    EXPECT_TRUE(FunctionStore::ValidateName(name).has_value()) << name;
  }
  EXPECT_TRUE(FunctionStore::ValidateName(std::string(63, 'a')).has_value());
}

TEST(FunctionStoreTest, NamesThatCouldEscapeOrAreMalformedAreRefused) {
  const std::string_view bad[] = {"",    "..",      "../echo",  "echo/..", "a/b",    "/etc/passwd",
                                  ".",   ".hidden", "Echo",     "-echo",   "echo-",  "echo.so",
                                  "a b", "a_b",     "\xc3\xa9", "echo\n",  "%2e%2e", "..%2fpasswd"};
  for (std::string_view name : bad) {
    auto ok = FunctionStore::ValidateName(name);
    ASSERT_FALSE(ok.has_value()) << "accepted: " << name;
    EXPECT_EQ(ok.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(FunctionStore::ValidateName(std::string(64, 'a')).has_value());
  auto up = FunctionStore::ValidateName("../../etc/passwd");
  EXPECT_NE(up.error().message().find("would leave the function store directory"),
            std::string::npos)
      << up.error().message();
  auto nul = FunctionStore::ValidateName(std::string_view("a\0b", 3));
  EXPECT_NE(nul.error().message().find("a\\x00b"), std::string::npos) << nul.error().message();
}

TEST(FunctionStoreTest, OpenRefusesWhatIsNotADirectory) {
  auto s = FunctionStore::Open("/nonexistent/faasnode/functions");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kNotFound);
}

class StoreOnTestdata : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = FunctionStore::Open(FAASNODE_STORE_TESTDATA_DIR);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    store_ = std::move(*s);
  }
  std::unique_ptr<FunctionStore> store_;
};

TEST_F(StoreOnTestdata, PathOfAndRefusedEscapesTouchNoFile) {
  EXPECT_EQ(*store_->PathOf("probe"), std::string(FAASNODE_STORE_TESTDATA_DIR) + "/probe.so");
  auto escape = store_->Load("../testdata/probe");
  ASSERT_FALSE(escape.has_value());
  EXPECT_EQ(escape.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(StoreOnTestdata, LoadsOnceAndShares) {
  auto a = store_->Load("probe");
  ASSERT_TRUE(a.has_value()) << a.error().message();
  auto b = store_->Load("probe");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*a)->name(), "probe");
}

TEST_F(StoreOnTestdata, RefusesAnObjectThatCallsItselfSomethingElse) {
  auto fn = store_->Load("misnamed");
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("calls itself 'someone-else', not 'misnamed'"),
            std::string::npos)
      << fn.error().message();
}

TEST_F(StoreOnTestdata, PassesLoaderErrorsThroughAndDoesNotCacheThem) {
  for (int i = 0; i < 2; ++i) {
    auto fn = store_->Load("wrong-abi");
    ASSERT_FALSE(fn.has_value());
    EXPECT_NE(fn.error().message().find("built against SDK ABI v99"), std::string::npos);
  }
  auto gone = store_->Load("no-such-function");
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);
}

TEST_F(StoreOnTestdata, ListsTheObjectsByName) {
  auto names = store_->List();
  ASSERT_TRUE(names.has_value()) << names.error().message();
  const std::vector<std::string> want = {"abi-v1",      "c-hello", "fetch",          "misnamed", "no-descriptor",
                                         "null-handle", "probe",   "symbol-is-code", "wrong-abi"};
  EXPECT_EQ(*names, want);
}

}  // namespace
}  // namespace faasnode::store
