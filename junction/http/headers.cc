// headers.cc — case-insensitive header lookup and comma-separated token matching.
#include "junction/http/headers.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace junction::http {
namespace {

// RFC 9110 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
//                         "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
constexpr std::array<bool, 256> kTchar = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (unsigned char c : std::string_view("!#$%&'*+-.^_`|~")) t[c] = true;
  return t;
}();

constexpr char ToLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ToLowerAscii(a[i]) != ToLowerAscii(b[i])) return false;
  }
  return true;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  // No branch per byte: names are short and almost always valid, so the whole name is
  // looked at either way (this runs on every request and reply header name).
  bool ok = true;
  for (char c : s) ok &= kTchar[static_cast<unsigned char>(c)];
  return ok;
}

bool ContainsCrLfOrNul(std::string_view s, bool nul_too) {
  // Eight bytes at a time: CR, LF and NUL are all below 0x0e, and a word with no byte below
  // 0x0e (most header values) needs no closer look. `has_less` is the bit trick from "Bit
  // Twiddling Hacks": nonzero exactly when some byte of x is below n (n <= 128).
  constexpr std::uint64_t kOnes = ~std::uint64_t{0} / 255;
  auto has_less = [](std::uint64_t x, std::uint64_t n) { return (x - kOnes * n) & ~x & (kOnes * 128); };
  auto bad_in = [nul_too](const char* p, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) {
      if (p[j] == '\r' || p[j] == '\n' || (nul_too && p[j] == '\0')) return true;
    }
    return false;
  };
  const char* p = s.data();
  const std::size_t n = s.size();
  if (n < 8) return bad_in(p, n);
  auto word_bad = [&](std::size_t at) {
    std::uint64_t w;
    std::memcpy(&w, p + at, 8);
    return has_less(w, 0x0e) != 0 && bad_in(p + at, 8);
  };
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if (word_bad(i)) return true;
  }
  // The tail as the last eight bytes, overlapping the words already seen.
  return i < n && word_bad(n - 8);
}

bool IsValidFieldValue(std::string_view s) { return !ContainsCrLfOrNul(s, /*nul_too=*/true); }

void AppendHeaderLine(std::string& lines, std::string_view name, std::string_view value) {
  // One capacity check and four copies, instead of four appends' checks (four or more lines
  // per invocation reply).
  // (Not resize_and_overwrite: when it grows the string, libstdc++ 12's passes the operation
  // the grown capacity instead of the size asked for.)
  const std::size_t at = lines.size();
  lines.resize(at + name.size() + value.size() + 4);
  char* p = lines.data() + at;
  std::memcpy(p, name.data(), name.size());
  p += name.size();
  *p++ = ':';
  *p++ = ' ';
  std::memcpy(p, value.data(), value.size());
  p += value.size();
  *p++ = '\r';
  *p = '\n';
}

bool ForEachHeaderLine(std::string_view lines,
                       const std::function<void(std::string_view name, std::string_view value)>& fn) {
  while (!lines.empty()) {
    const std::size_t end = lines.find("\r\n");
    if (end == std::string_view::npos) return false;
    const std::string_view line = lines.substr(0, end);
    const std::size_t colon = line.find(": ");
    if (colon == std::string_view::npos) return false;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 2);
    if (!IsToken(name) || !IsValidFieldValue(value)) return false;
    fn(name, value);
    lines.remove_prefix(end + 2);
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::string_view> Headers::Find(std::string_view name) const {
  for (const Header& h : entries_) {
    if (EqualsIgnoreCase(h.name, name)) return h.value;
  }
  return std::nullopt;
}

std::size_t Headers::Count(std::string_view name) const {
  std::size_t n = 0;
  for (const Header& h : entries_) n += EqualsIgnoreCase(h.name, name) ? 1 : 0;
  return n;
}

bool Headers::HasToken(std::string_view name, std::string_view token) const {
  for (const Header& h : entries_) {
    if (!EqualsIgnoreCase(h.name, name)) continue;
    std::string_view rest = h.value;
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string_view element = TrimOws(rest.substr(0, comma));
      if (EqualsIgnoreCase(element, token)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

}  // namespace junction::http
