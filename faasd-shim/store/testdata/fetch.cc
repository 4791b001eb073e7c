// fetch.cc — test fixture: a function that calls out over HTTP through the host (ABI v3
// http_request) and answers with what it got.
//
// ?url=U the URL to call (the request's method and body are sent on; X-Token passed along);
// ?timeout_ms=N the call's own timeout. Answers 200 with "STATUS HEADER(X-Seen) BODY" when a
// response came, else 502 with "CODE ERROR" (the faasnode_result and the host's message).
#include <chrono>
#include <string>

#include "faasnode/function.h"

namespace {

class Fetch {
 public:
  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    const std::string url = req.Query("url").value_or("");
    faasnode::sdk::HttpCall call{.method = req.method(), .url = url, .body = req.body()};
    if (auto token = req.Header("X-Token")) call.headers.push_back({"X-Token", *token});
    if (auto t = req.Query("timeout_ms")) {
      call.timeout = std::chrono::milliseconds(faasnode::sdk::ParseUint(*t).value_or(0));
    }
    const faasnode::sdk::HttpResult r = req.Fetch(call);
    if (!r.ok()) {
      resp.Status(502);
      resp.Write(std::to_string(r.code()) + " " + std::string(r.error()));
      return;
    }
    resp.Write(std::to_string(r.status()) + " " + std::string(r.Header("x-seen").value_or("-")) + " " +
               std::string(r.body()));
  }
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(Fetch, "fetch")
