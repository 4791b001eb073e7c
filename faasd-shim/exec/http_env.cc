// http_env.cc — Http_* variables for an exec invocation (see http_env.h).
#include "faasd-shim/exec/http_env.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace faasnode::exec {

std::string CanonicalHeaderName(std::string_view name) {
  std::string out(name);
  bool upper = true;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(upper ? std::toupper(u) : std::tolower(u));
    upper = c == '-';
  }
  return out;
}

void AppendHttpEnv(const store::Request& request, std::vector<std::string>& out) {
  std::vector<std::string> seen;
  for (const store::Header& h : request.headers) {
    std::string name = CanonicalHeaderName(h.name);
    if (name == "Host" || std::ranges::find(seen, name) != seen.end()) continue;
    seen.push_back(name);
    std::string var = "Http_" + name;
    std::ranges::replace(var, '-', '_');
    // An environment string cannot hold NUL; the HTTP parser refuses it in values anyway.
    std::string value(h.value.substr(0, h.value.find('\0')));
    out.push_back(fmt::format("{}={}", var, value));
  }
  out.push_back(fmt::format("Http_Method={}", request.method));
  out.push_back(fmt::format("Http_ContentLength={}", request.body.size()));
  out.push_back(fmt::format("Http_Content_Length={}", request.body.size()));
  if (!request.query.empty()) out.push_back(fmt::format("Http_Query={}", request.query));
  out.push_back(fmt::format("Http_Path={}", request.path.empty() ? std::string_view("/") : request.path));
}

}  // namespace faasnode::exec
