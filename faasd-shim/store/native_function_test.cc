// native_function_test.cc — the SDK ABI checks of NativeFunction::Load and their messages.
#include "faasd-shim/store/native_function.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace faasnode::store {
namespace {

using junction::ErrorCode;

std::string Fixture(const std::string& name) {
  return std::string(FAASNODE_STORE_TESTDATA_DIR) + "/" + name + ".so";
}

TEST(NativeFunctionTest, LoadsAFunctionWrittenInC) {
  auto fn = NativeFunction::Load(Fixture("c-hello"));
  ASSERT_TRUE(fn.has_value()) << fn.error().message();
  EXPECT_EQ(fn->name(), "c-hello");
  EXPECT_EQ(fn->path(), Fixture("c-hello"));
  EXPECT_EQ(fn->descriptor().abi_version, FAASNODE_ABI_VERSION);
  EXPECT_NE(fn->descriptor().handle, nullptr);
}

TEST(NativeFunctionTest, WrongAbiVersionIsRefusedWithTheRebuildHint) {
  auto fn = NativeFunction::Load(Fixture("wrong-abi"));
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      fn.error().message(),
      Fixture("wrong-abi") +
          ": built against SDK ABI v99; this node speaks v1 to v3: rebuild it against functions/sdk");
}

TEST(NativeFunctionTest, LoadsAnObjectBuiltAgainstAbiV1) {
  // v2 appended report_energy to the host table; a v1 object never reads it and still loads.
  auto fn = NativeFunction::Load(Fixture("abi-v1"));
  ASSERT_TRUE(fn.has_value()) << fn.error().message();
  EXPECT_EQ(fn->descriptor().abi_version, 1u);
  EXPECT_EQ(fn->name(), "abi-v1");
}

TEST(NativeFunctionTest, MissingDescriptorSymbolIsRefused) {
  auto fn = NativeFunction::Load(Fixture("no-descriptor"));
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(fn.error().message().find("exports no 'faasnode_function' descriptor"),
            std::string::npos)
      << fn.error().message();
  EXPECT_NE(fn.error().message().find("FAASNODE_EXPORT_FUNCTION"), std::string::npos);
}

TEST(NativeFunctionTest, DescriptorSymbolOnCodeIsRefused) {
  auto fn = NativeFunction::Load(Fixture("symbol-is-code"));
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message().find("is not a descriptor"), std::string::npos)
      << fn.error().message();
}

TEST(NativeFunctionTest, NullCallbackIsRefused) {
  auto fn = NativeFunction::Load(Fixture("null-handle"));
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(fn.error().message().find("function 'null-handle' has a null handle callback"),
            std::string::npos)
      << fn.error().message();
}

TEST(NativeFunctionTest, MissingFileIsNotFound) {
  auto fn = NativeFunction::Load(Fixture("does-not-exist"));
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(fn.error().message().find("does-not-exist.so: no such function object"),
            std::string::npos)
      << fn.error().message();
}

TEST(NativeFunctionTest, NotASharedObjectIsRefused) {
  char dir[] = "/tmp/faasnode-store-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/text.so";
  std::ofstream(path) << "this is not ELF\n";
  auto fn = NativeFunction::Load(path);
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(fn.error().message().find(path + ": cannot load: "), std::string::npos)
      << fn.error().message();
  auto d = NativeFunction::Load(dir);
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message().find("not a regular file"), std::string::npos);
  std::remove(path.c_str());
  ::rmdir(dir);
}

TEST(NativeFunctionTest, MovedObjectStaysLoaded) {
  auto fn = NativeFunction::Load(Fixture("c-hello"));
  ASSERT_TRUE(fn.has_value()) << fn.error().message();
  NativeFunction moved = std::move(*fn);
  NativeFunction assigned = *NativeFunction::Load(Fixture("probe"));
  assigned = std::move(moved);  // closes probe, keeps c-hello
  EXPECT_EQ(assigned.name(), "c-hello");
  EXPECT_EQ(assigned.descriptor().abi_version, FAASNODE_ABI_VERSION);
}

}  // namespace
}  // namespace faasnode::store
