// headers.h — an HTTP header list: name/value views in arrival order, case-insensitive lookup.
//
// A Headers holds string_views; it owns none of the bytes. Headers filled by a parser point
// into that parser's buffer and live as long as the message they belong to (see
// request_parser.h). Headers filled by a caller point wherever the caller says, and the caller
// keeps those bytes alive. Clear() keeps the capacity, so a list reused across messages stops
// allocating once it has grown to the largest header count seen.
//
//   std::optional<std::string_view> type = request.headers.Find("content-type");
//   if (request.headers.HasToken("connection", "close")) { ... }
//
// Thread-safety: none; a Headers belongs to one connection. Never blocks.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace junction::http {

// One header field as it arrived: the name keeps its case, the value has no surrounding
// whitespace.
struct Header {
  std::string_view name;
  std::string_view value;
};

// ASCII case-insensitive equality (header names, tokens). Never allocates.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

class Headers {
 public:
  using const_iterator = std::vector<Header>::const_iterator;

  // Appends a field; duplicates are kept in order (a list-valued field may repeat).
  void Add(std::string_view name, std::string_view value) { entries_.push_back({name, value}); }
  void Clear() { entries_.clear(); }
  void Reserve(std::size_t n) { entries_.reserve(n); }

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const Header& operator[](std::size_t i) const { return entries_[i]; }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

  // The value of the first field called `name` (any case), or nullopt when there is none.
  std::optional<std::string_view> Find(std::string_view name) const;
  bool Contains(std::string_view name) const { return Find(name).has_value(); }
  // How many fields are called `name` (any case).
  std::size_t Count(std::string_view name) const;
  // True when some field called `name` has `token` as one of its comma-separated elements,
  // compared case-insensitively: HasToken("connection", "close") for "Keep-Alive, Close".
  bool HasToken(std::string_view name, std::string_view token) const;

 private:
  std::vector<Header> entries_;
};

// True when `s` is an RFC 9110 token (section 5.6.2): the only bytes allowed in a field name.
bool IsToken(std::string_view s);

// False when a field value holds CR, LF or NUL (RFC 9110 section 5.5): bytes that would let
// a value end the field or the head early.
bool IsValidFieldValue(std::string_view s);
// True when `s` holds CR or LF (or NUL, when `nul_too`). Word-at-a-time; IsValidFieldValue is
// !ContainsCrLfOrNul(s, true).
bool ContainsCrLfOrNul(std::string_view s, bool nul_too);

// Whitespace RFC 9110 calls OWS (space, tab) removed from both ends.
std::string_view TrimOws(std::string_view s);

// Header lines as a server's handler may pre-format them (Reply::header_lines): "Name: value"
// and CRLF each. AppendHeaderLine writes one, unchecked (the caller vouches for the name and
// value); ForEachHeaderLine calls fn(name, value) for each well-formed line, in order, and
// returns false if a line is malformed (not a token, no ": ", no CRLF, a CR/LF/NUL inside).
void AppendHeaderLine(std::string& lines, std::string_view name, std::string_view value);
bool ForEachHeaderLine(std::string_view lines,
                       const std::function<void(std::string_view name, std::string_view value)>& fn);

}  // namespace junction::http
