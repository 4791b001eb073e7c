// safetensors_test.cc — safetensors round trip of MLP weights and the reader's error cases.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "functions/swiglu-mlp/safetensors.h"
#include "functions/swiglu-mlp/weights.h"

namespace swiglu {
namespace {

using junction::ErrorCode;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("swiglu_st_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // A file with header JSON `json` followed by `data_bytes` zero bytes.
  std::string WriteRaw(const std::string& name, const std::string& json, size_t data_bytes) {
    std::string path = Path(name);
    std::ofstream f(path, std::ios::binary);
    uint64_t len = json.size();
    f.write(reinterpret_cast<const char*>(&len), 8);
    f << json;
    f << std::string(data_bytes, '\0');
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(SafetensorsTest, RoundTripsSeededWeights) {
  MlpShape shape = CustomShape(96, 136);
  MlpWeights w = MakeSeededWeights(shape, 21, 1);
  std::string path = Path("mlp.safetensors");
  ASSERT_TRUE(SaveSafetensorsWeights(path, w, 3).has_value());

  auto reader = SafetensorsReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message();
  ASSERT_EQ(reader->tensors().size(), 3u);
  const auto& info = reader->tensors().at("model.layers.3.mlp.down_proj.weight");
  EXPECT_EQ(info.dtype, "BF16");
  EXPECT_EQ(info.shape, (std::vector<int64_t>{96, 136}));

  auto back = LoadSafetensorsWeights(path, shape, 3);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(0, std::memcmp(back->gate.data(), w.gate.data(), w.gate.size() * 2));
  EXPECT_EQ(0, std::memcmp(back->up.data(), w.up.data(), w.up.size() * 2));
  EXPECT_EQ(0, std::memcmp(back->down.data(), w.down.data(), w.down.size() * 2));
}

TEST_F(SafetensorsTest, MissingLayerIsNotFoundAndListsWhatIsThere) {
  MlpShape shape = CustomShape(16, 24);
  std::string path = Path("l0.safetensors");
  ASSERT_TRUE(SaveSafetensorsWeights(path, MakeSeededWeights(shape, 1, 1), 0).has_value());
  auto w = LoadSafetensorsWeights(path, shape, 5);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(w.error().message().find("model.layers.5.mlp.gate_proj.weight"), std::string::npos);
  EXPECT_NE(w.error().message().find("model.layers.0.mlp.up_proj.weight"), std::string::npos);
}

TEST_F(SafetensorsTest, WrongShapeSaysWhatWasExpected) {
  std::string path = Path("small.safetensors");
  ASSERT_TRUE(
      SaveSafetensorsWeights(path, MakeSeededWeights(CustomShape(16, 24), 1, 1), 0).has_value());
  auto w = LoadSafetensorsWeights(path, CustomShape(16, 32), 0);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(w.error().message().find("[24, 16]"), std::string::npos) << w.error().message();
  EXPECT_NE(w.error().message().find("[32, 16]"), std::string::npos) << w.error().message();
}

TEST_F(SafetensorsTest, WrongDtypeIsRejected) {
  std::string json =
      R"({"model.layers.0.mlp.gate_proj.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  std::string path = WriteRaw("f32.safetensors", json, 16);
  auto reader = SafetensorsReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message();
  const int64_t shape[2] = {2, 2};
  auto t = reader->ReadBf16("model.layers.0.mlp.gate_proj.weight", shape);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(t.error().message().find("F32"), std::string::npos);
}

TEST_F(SafetensorsTest, MalformedFilesAreRejected) {
  auto open = [&](const std::string& name, const std::string& json, size_t data) {
    return SafetensorsReader::Open(WriteRaw(name, json, data));
  };
  auto not_json = open("a", "{not json", 0);
  ASSERT_FALSE(not_json.has_value());
  EXPECT_EQ(not_json.error().code(), ErrorCode::kInvalidArgument);
  auto past_end = open("b", R"({"t":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", 4);
  ASSERT_FALSE(past_end.has_value());
  EXPECT_NE(past_end.error().message().find("outside"), std::string::npos);
  auto no_offsets = open("c", R"({"t":{"dtype":"BF16","shape":[4]}})", 8);
  ASSERT_FALSE(no_offsets.has_value());
  // A header length larger than the file.
  std::string path = Path("d");
  {
    std::ofstream f(path, std::ios::binary);
    uint64_t len = 1000;
    f.write(reinterpret_cast<const char*>(&len), 8);
    f << "{}";
  }
  auto too_long = SafetensorsReader::Open(path);
  ASSERT_FALSE(too_long.has_value());
  EXPECT_EQ(too_long.error().code(), ErrorCode::kInvalidArgument);
  auto missing = SafetensorsReader::Open(Path("does-not-exist"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kIo);
  // Byte counts that disagree with the shape.
  auto reader = open("e", R"({"t":{"dtype":"BF16","shape":[4],"data_offsets":[0,6]}})", 8);
  ASSERT_TRUE(reader.has_value());
  const int64_t shape[1] = {4};
  auto t = reader->ReadBf16("t", shape);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace swiglu
