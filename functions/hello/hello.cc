// hello.cc — the hello function: a greeting to the `name` query parameter ("world" without one).
//
// GET /function/hello?name=Ada -> "Hello, Ada!\n" (text/plain). The GREETING env var, when the
// deployment sets it, replaces "Hello".
#include <string>

#include "faasnode/function.h"

namespace {

class Hello {
 public:
  explicit Hello(const faasnode::sdk::Env& env)
      : greeting_(env.Var("GREETING").value_or("Hello")) {}

  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    std::string name = req.Query("name").value_or("world");
    if (name.empty()) name = "world";
    std::string text;
    text.reserve(greeting_.size() + name.size() + 4);
    text.append(greeting_).append(", ").append(name).append("!\n");
    resp.Header("Content-Type", "text/plain; charset=utf-8");
    resp.Write(text);
  }

 private:
  std::string_view greeting_;  // points into the Env: valid for this object's life
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(Hello, "hello")
