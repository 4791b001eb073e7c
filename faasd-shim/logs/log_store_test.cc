// log_store_test.cc — retention, queries, the Message JSON and Go's time formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include "faasd-shim/logs/log_store.h"
#include "faasd-shim/logs/sdk_log_sink.h"

namespace faasnode::logs {
namespace {

TEST(LogStore, KeepsLinesPerFunctionWithinLineAndByteBounds) {
  LogStore s({.max_lines = 3, .max_bytes = 1000});
  for (int i = 0; i < 5; ++i) s.AppendAt(1000 + i, "f", "openfaas-fn", "7", "line " + std::to_string(i) + "\n");
  s.AppendAt(1, "g", "openfaas-fn", "8", "other");
  s.AppendAt(1, "f", "other-ns", "8", "other ns");
  auto lines = s.Read({.name = "f"});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].text, "line 2");
  EXPECT_EQ(lines[2].text, "line 4");
  EXPECT_EQ(lines[2].instance, "7");
  LogStore b({.max_lines = 100, .max_bytes = 10});
  b.AppendAt(1, "f", "openfaas-fn", "i", "12345");
  b.AppendAt(2, "f", "openfaas-fn", "i", "67890");
  b.AppendAt(3, "f", "openfaas-fn", "i", "abc");
  auto kept = b.Read({.name = "f"});
  ASSERT_EQ(kept.size(), 2u) << "10 bytes hold the last two lines only";
  EXPECT_EQ(kept[0].text, "67890");
  b.AppendAt(4, "f", "openfaas-fn", "i", std::string(50, 'x'));
  kept = b.Read({.name = "f"});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].text.size(), 10u) << "a line longer than the bound is cut to it";
}

TEST(LogStore, TailSinceInstanceAndFollowCursor) {
  LogStore s;
  for (int i = 0; i < 10; ++i) s.AppendAt(i * 1000, "f", "openfaas-fn", i % 2 ? "a" : "b", std::to_string(i));
  EXPECT_EQ(s.Read({.name = "f", .tail = 2}).size(), 2u);
  EXPECT_EQ(s.Read({.name = "f", .tail = 2})[0].text, "8");
  EXPECT_EQ(s.Read({.name = "f", .tail = 0}).size(), 10u);
  EXPECT_EQ(s.Read({.name = "f", .since_ns = 7000}).size(), 3u);
  EXPECT_EQ(s.Read({.name = "f", .instance = "a"}).size(), 5u);
  EXPECT_TRUE(s.Read({.name = "nope"}).empty());
  const auto cursor = s.last_seq();
  EXPECT_TRUE(s.Read({.name = "f"}, cursor).empty());
  s.AppendAt(20000, "f", "openfaas-fn", "a", "new");
  auto more = s.Read({.name = "f", .tail = 5}, cursor);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].text, "new");
}

TEST(LogStore, SdkSinkAddsLinesUnderTheNodePid) {
  LogStore s;
  auto sink = MakeSdkLogSink(&s, "echo", "openfaas-fn");
  sink({.function = "echo", .call_id = 1, .level = store::LogLevel::kInfo, .message = "hello"});
  sink({.function = "echo", .call_id = 1, .level = store::LogLevel::kDebug, .message = "dropped"});
  auto lines = s.Read({.name = "echo"});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "hello");
  EXPECT_EQ(lines[0].instance, std::to_string(getpid()));
  EXPECT_GT(lines[0].unix_ns, 1'600'000'000'000'000'000);
}

TEST(MessageJson, AsGoEncodesIt) {
  std::string out;
  AppendMessageJson(out, {.seq = 1, .unix_ns = 1'700'000'000'120'000'000, .name = "f", .ns = "openfaas-fn",
                          .instance = "12", .text = "a \"q\" <b>\t\x01"});
  EXPECT_EQ(out, "{\"name\":\"f\",\"namespace\":\"openfaas-fn\",\"instance\":\"12\",\"timestamp\":\"2023-11-14T22:13:20.12Z\","
                 "\"text\":\"a \\\"q\\\" \\u003cb\\u003e\\t\\u0001\"}\n");
}

TEST(Rfc3339, FormatAndParse) {
  EXPECT_EQ(FormatRfc3339Nano(1'700'000'000'000'000'000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRfc3339Nano(1'700'000'000'000'000'001), "2023-11-14T22:13:20.000000001Z");
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20Z"), 1'700'000'000'000'000'000);
  EXPECT_EQ(ParseRfc3339("2023-11-14T23:13:20.5+01:00"), 1'700'000'000'500'000'000);
  EXPECT_EQ(ParseRfc3339("2023-11-14T21:13:20-01:00"), 1'700'000'000'000'000'000);
  EXPECT_EQ(ParseRfc3339("2999-01-01T00:00:00Z"), INT64_MAX) << "past int64 nanoseconds: clamped";
  for (const char* bad : {"", "2023-11-14", "2023-11-14T22:13:20", "2023-11-14 22:13:20Z", "2023-13-14T22:13:20Z",
                          "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20Zjunk", "yesterday"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace faasnode::logs
