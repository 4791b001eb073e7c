// endpoint_test.cc — parsing and printing of IPv4 addresses and endpoints.
#include "junction/net/endpoint.h"

#include <gtest/gtest.h>

namespace junction::net {
namespace {

TEST(Ipv4AddrTest, ParsesAndPrintsDottedQuads) {
  auto a = Ipv4Addr::Parse("127.0.0.1");
  ASSERT_TRUE(a.has_value()) << a.error().message();
  EXPECT_EQ(*a, Ipv4Addr::Loopback());
  EXPECT_EQ(a->host_order(), 0x7f000001u);
  EXPECT_EQ(a->ToString(), "127.0.0.1");
  EXPECT_EQ(Ipv4Addr::Parse("255.255.255.255")->host_order(), 0xffffffffu);
  EXPECT_TRUE(Ipv4Addr::Parse("0.0.0.0")->is_any());
  EXPECT_EQ(Ipv4Addr(10, 1, 2, 3).ToString(), "10.1.2.3");
}

TEST(Ipv4AddrTest, RejectsMalformedAddresses) {
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1..2.3", "a.b.c.d", "1.2.3.-4",
                          " 1.2.3.4", "1.2.3.4 ", "+1.2.3.4", "1.2.3.0004x"}) {
    auto a = Ipv4Addr::Parse(bad);
    ASSERT_FALSE(a.has_value()) << bad;
    EXPECT_EQ(a.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(a.error().message().find("IPv4"), std::string::npos) << a.error().message();
  }
}

TEST(EndpointTest, ParsesAndPrints) {
  auto e = Endpoint::Parse("127.0.0.1:8080");
  ASSERT_TRUE(e.has_value()) << e.error().message();
  EXPECT_EQ(e->addr, Ipv4Addr::Loopback());
  EXPECT_EQ(e->port, 8080);
  EXPECT_EQ(e->ToString(), "127.0.0.1:8080");
  EXPECT_EQ(Endpoint::Parse("0.0.0.0:0")->port, 0);
  EXPECT_EQ(Endpoint::Parse("10.0.0.1:65535")->port, 65535);
  EXPECT_EQ((Endpoint{Ipv4Addr(1, 2, 3, 4), 5}).ToString(), "1.2.3.4:5");
}

TEST(EndpointTest, RejectsMalformedEndpoints) {
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", ":80",
                          "localhost:80", "127.0.0.1:8o", "127.0.0.1:123456"}) {
    auto e = Endpoint::Parse(bad);
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_EQ(e.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(e.error().message().find(bad), std::string::npos) << e.error().message();
  }
}

TEST(EndpointTest, OrdersByAddressThenPort) {
  EXPECT_LT(*Endpoint::Parse("1.0.0.0:9"), *Endpoint::Parse("2.0.0.0:1"));
  EXPECT_LT(*Endpoint::Parse("1.0.0.0:1"), *Endpoint::Parse("1.0.0.0:2"));
  EXPECT_EQ(*Endpoint::Parse("1.0.0.0:2"), (Endpoint{Ipv4Addr(1, 0, 0, 0), 2}));
}

}  // namespace
}  // namespace junction::net
