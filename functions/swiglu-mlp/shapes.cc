// shapes.cc — lookup of Qwen-2.5 MLP shapes by name.
#include "functions/swiglu-mlp/shapes.h"

#include <cctype>

namespace swiglu {

junction::Status<MlpShape> QwenShape(std::string_view name) {
  std::string key;
  for (char c : name) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  constexpr std::string_view kPrefix = "QWEN2.5-";
  if (key.starts_with(kPrefix)) key.erase(0, kPrefix.size());
  std::string valid;
  for (const MlpShape& s : kQwen25Shapes) {
    if (key == s.name) return s;
    if (!valid.empty()) valid += ", ";
    valid += s.name;
  }
  return junction::MakeError(
      junction::ErrorCode::kNotFound,
      "unknown Qwen-2.5 model size '" + std::string(name) + "'; use one of: " + valid);
}

}  // namespace swiglu
