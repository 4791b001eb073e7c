// headers.cc — case-insensitive header lookup and comma-separated token matching.
#include "junction/http/headers.h"

#include <array>

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
  for (char c : s) {
    if (!kTchar[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

bool IsValidFieldValue(std::string_view s) {
  for (char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

void AppendHeaderLine(std::string& lines, std::string_view name, std::string_view value) {
  lines.append(name);
  lines.append(": ");
  lines.append(value);
  lines.append("\r\n");
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
