// target.cc — request-target splitting.
#include "junction/http/target.h"

namespace junction::http {

Target SplitTarget(std::string_view target) {
  if (std::size_t hash = target.find('#'); hash != std::string_view::npos) {
    target = target.substr(0, hash);
  }
  // absolute-form: scheme "://" authority [path-abempty] ["?" query]
  if (!target.empty() && target.front() != '/' && target != "*") {
    std::size_t scheme_end = target.find("://");
    if (scheme_end != std::string_view::npos) {
      std::size_t path_start = target.find_first_of("/?", scheme_end + 3);
      target =
          path_start == std::string_view::npos ? std::string_view() : target.substr(path_start);
    }
  }
  Target out;
  std::size_t question = target.find('?');
  out.path = target.substr(0, question);
  if (question != std::string_view::npos) out.query = target.substr(question + 1);
  if (out.path.empty()) out.path = "/";
  return out;
}

}  // namespace junction::http
