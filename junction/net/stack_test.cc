// stack_test.cc — the registry of named stacks, error classification and counter sums.
#include "junction/net/stack.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "junction/net/net_error.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace junction::net {
namespace {

TEST(StackRegistryTest, BuiltInsAreListed) {
  auto names = StackNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "kernel"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "loopback"), names.end());
}

TEST(StackRegistryTest, DpdkIsUnavailableWithAClearMessage) {
  auto s = CreateStack("dpdk");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message().find("kernel"), std::string::npos) << s.error().message();
}

TEST(StackRegistryTest, UnknownNameListsTheKnownOnes) {
  auto s = CreateStack("carrier-pigeon");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(s.error().message().find("carrier-pigeon"), std::string::npos);
  EXPECT_NE(s.error().message().find("loopback"), std::string::npos) << s.error().message();
}

TEST(StackRegistryTest, RegisterAddsAndRefusesDuplicates) {
  int made = 0;
  auto factory = [&made](const StackOptions& o) -> Status<std::unique_ptr<Stack>> {
    ++made;
    return CreateStack("loopback", o);
  };
  ASSERT_TRUE(RegisterStack("test-alias", factory).has_value());
  auto again = RegisterStack("test-alias", factory);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_FALSE(RegisterStack("kernel", factory).has_value());
  sched::testing::RunOnCores(1, [&] {
    auto s = CreateStack("test-alias");
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ((*s)->name(), "loopback");
  });
  EXPECT_EQ(made, 1);
}

TEST(StackRegistryTest, KernelStackNeedsARuntime) {
  auto s = CreateStack("kernel");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("Runtime::Run"), std::string::npos) << s.error().message();
}

TEST(NetErrorTest, OsErrorsAreClassified) {
  EXPECT_TRUE(IsConnectionRefused(OsError("c", ECONNREFUSED)));
  EXPECT_TRUE(IsConnectionReset(OsError("r", ECONNRESET)));
  EXPECT_TRUE(IsConnectionReset(OsError("w", EPIPE)));
  EXPECT_TRUE(IsTimedOut(OsError("t", ETIMEDOUT)));
  EXPECT_TRUE(IsAddressInUse(OsError("l", EADDRINUSE)));
  EXPECT_EQ(OsError("l", EADDRINUSE).code(), ErrorCode::kAlreadyExists);
  EXPECT_TRUE(IsClosed(ClosedError("x")));
  const Error other = OsError("socket", EMFILE);
  EXPECT_EQ(other.code(), ErrorCode::kIo);
  EXPECT_FALSE(IsConnectionRefused(other) || IsConnectionReset(other) || IsTimedOut(other) ||
               IsClosed(other) || IsAddressInUse(other));
  EXPECT_NE(RefusedError("Connect 127.0.0.1:1").message().find("127.0.0.1:1"), std::string::npos);
}

TEST(NetCountersTest, PerCoreSlotsSumUp) {
  sched::testing::RunOnCores(2, [] {
    NetCounterSet set(2);
    auto h0 =
        sched::Spawn([&] { set.Add(Counter::kBytesIn, 10); }, {.core = 0, .stealable = false});
    auto h1 = sched::Spawn(
        [&] {
          set.Add(Counter::kBytesIn, 5);
          set.Add(Counter::kErrors);
        },
        {.core = 1, .stealable = false});
    h0->Join();
    h1->Join();
    EXPECT_EQ(set.Read(0).bytes_in, 10u);
    EXPECT_EQ(set.Read(1).bytes_in, 5u);
    EXPECT_EQ(set.Read(1).errors, 1u);
    EXPECT_EQ(set.Total().bytes_in, 15u);
  });
  NetCounterSet outside(1);
  outside.Add(Counter::kTimeouts, 3);  // not a uthread: the overflow slot
  EXPECT_EQ(outside.Read(-1).timeouts, 3u);
  EXPECT_EQ(outside.Total().timeouts, 3u);
}

}  // namespace
}  // namespace junction::net
