// echo.cc — the echo function: answers with the request body, keeping its Content-Type.
#include "faasnode/function.h"

namespace {

class Echo {
 public:
  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    if (auto type = req.Header("Content-Type")) resp.Header("Content-Type", *type);
    resp.Write(req.body());
  }
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(Echo, "echo")
