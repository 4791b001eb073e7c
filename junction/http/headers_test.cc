// headers_test.cc — Headers lookup, token matching and OWS trimming.
#include "junction/http/headers.h"

#include <gtest/gtest.h>

namespace junction::http {
namespace {

TEST(HeadersTest, EqualsIgnoreCaseComparesAsciiOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-length"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Length", "content-lengt"));
  EXPECT_FALSE(EqualsIgnoreCase("a", "b"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));  // 0x5b vs 0x7b differ by 0x20 but are not letters
}

TEST(HeadersTest, FindReturnsFirstMatchInAnyCase) {
  Headers h;
  h.Add("Host", "example.com");
  h.Add("X-Dup", "one");
  h.Add("x-dup", "two");
  EXPECT_EQ(h.Find("HOST"), "example.com");
  EXPECT_EQ(h.Find("x-DUP"), "one");
  EXPECT_EQ(h.Count("X-Dup"), 2u);
  EXPECT_FALSE(h.Find("absent").has_value());
  EXPECT_TRUE(h.Contains("host"));
  EXPECT_EQ(h.size(), 3u);
  h.Clear();
  EXPECT_TRUE(h.empty());
}

TEST(HeadersTest, HasTokenSplitsOnCommasAndTrims) {
  Headers h;
  h.Add("Connection", "Keep-Alive ,  Upgrade");
  h.Add("Connection", "CLOSE");
  EXPECT_TRUE(h.HasToken("connection", "keep-alive"));
  EXPECT_TRUE(h.HasToken("connection", "upgrade"));
  EXPECT_TRUE(h.HasToken("connection", "close"));
  EXPECT_FALSE(h.HasToken("connection", "keep"));
  EXPECT_FALSE(h.HasToken("expect", "close"));
}

TEST(HeadersTest, TrimOwsRemovesSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(TrimOws(" \t a b \t"), "a b");
  EXPECT_EQ(TrimOws("   "), "");
  EXPECT_EQ(TrimOws("x"), "x");
}

TEST(HeadersTest, TokenAndFieldValueChecks) {
  EXPECT_TRUE(IsToken("X-Call-Id"));
  EXPECT_TRUE(IsToken("!#$%&'*+-.^_`|~09azAZ"));
  EXPECT_FALSE(IsToken(""));
  EXPECT_FALSE(IsToken("a b"));
  EXPECT_FALSE(IsToken("a:b"));
  EXPECT_FALSE(IsToken("a/b"));
  EXPECT_FALSE(IsToken("caf\xc3\xa9"));
  EXPECT_TRUE(IsValidFieldValue("text/plain; charset=\"utf-8\"\t\xc3\xa9"));
  EXPECT_TRUE(IsValidFieldValue(""));
  EXPECT_FALSE(IsValidFieldValue("a\rb"));
  EXPECT_FALSE(IsValidFieldValue("a\nb"));
  EXPECT_FALSE(IsValidFieldValue(std::string_view("a\0b", 3)));
}

// The check goes eight bytes at a time: the bad byte at every position of words and tails,
// and the bytes below 0x0e that are allowed (tab, other controls) which send a word to the
// byte loop without failing it.
TEST(HeadersTest, CrLfNulFoundAtEveryOffset) {
  for (std::size_t len = 1; len <= 24; ++len) {
    for (std::size_t at = 0; at < len; ++at) {
      for (char bad : {'\r', '\n', '\0'}) {
        std::string s(len, 'a');
        s[at] = bad;
        EXPECT_FALSE(IsValidFieldValue(s)) << "len " << len << " at " << at;
        EXPECT_EQ(ContainsCrLfOrNul(s, /*nul_too=*/false), bad != '\0') << "len " << len << " at " << at;
      }
      std::string tabs(len, 'a');
      tabs[at] = '\t';
      tabs[len - 1] = '\x0b';
      EXPECT_TRUE(IsValidFieldValue(tabs));
    }
  }
}

TEST(HeadersTest, HeaderLinesRoundTrip) {
  std::string lines;
  AppendHeaderLine(lines, "X-Call-Id", "abc");
  AppendHeaderLine(lines, "X-Empty", "");
  EXPECT_EQ(lines, "X-Call-Id: abc\r\nX-Empty: \r\n");
  std::vector<std::pair<std::string, std::string>> got;
  EXPECT_TRUE(ForEachHeaderLine(lines, [&](std::string_view n, std::string_view v) { got.emplace_back(n, v); }));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (std::pair<std::string, std::string>{"X-Call-Id", "abc"}));
  EXPECT_EQ(got[1], (std::pair<std::string, std::string>{"X-Empty", ""}));
  EXPECT_TRUE(ForEachHeaderLine("", [](std::string_view, std::string_view) { ADD_FAILURE(); }));
  auto count = [](std::string_view l) {
    int n = 0;
    const bool ok = ForEachHeaderLine(l, [&](std::string_view, std::string_view) { ++n; });
    return ok ? n : -1;
  };
  EXPECT_EQ(count("A: 1\r\nB: 2"), -1) << "no CRLF at the end";
  EXPECT_EQ(count("A 1\r\n"), -1) << "no colon";
  EXPECT_EQ(count("A B: 1\r\n"), -1) << "not a token";
  EXPECT_EQ(count(std::string_view("A: 1\0\r\n", 7)), -1) << "NUL in the value";
  EXPECT_EQ(count("A: 1\r\nB: 2\r\n"), 2);
}

}  // namespace
}  // namespace junction::http
