// sha256_function.cc — the sha256 function: the lowercase hex SHA-256 digest of the body, one line.
#include "faasnode/function.h"
#include "sha256.h"

namespace {

class Sha256Function {
 public:
  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    std::string hex = faasnode::functions::Sha256Hex(req.body());
    hex.push_back('\n');
    resp.Header("Content-Type", "text/plain; charset=utf-8");
    resp.Write(hex);
  }
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(Sha256Function, "sha256")
