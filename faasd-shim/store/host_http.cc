// host_http.cc — http_request (ABI v3): the function's request to a junction/http client call,
// the client's response (or error) to host memory the function may read until handle returns.
#include "faasd-shim/store/host_http.h"

#include <fmt/format.h>

#include <algorithm>

#include "faasd-shim/store/host_call.h"
#include "junction/http/client/client.h"
#include "junction/sched/sched.h"

namespace faasnode::store {

// One call's result, owned by the faasnode_response.
struct HttpCallRecord {
  junction::http::ClientResponse response;
  std::vector<faasnode_kv> headers;  // views of response.headers in the ABI's layout
  std::string error;
};
void HttpCallRecordDeleter::operator()(HttpCallRecord* r) const { delete r; }

namespace {

std::string_view View(faasnode_str s) { return s.size == 0 ? std::string_view() : std::string_view(s.data, s.size); }
faasnode_str Str(std::string_view s) { return faasnode_str{s.data(), s.size()}; }

int ResultFor(junction::ErrorCode code) {
  switch (code) {
    case junction::ErrorCode::kInvalidArgument: return FAASNODE_ERR_INVALID;
    case junction::ErrorCode::kTimedOut: return FAASNODE_ERR_TIMED_OUT;
    case junction::ErrorCode::kResourceExhausted: return FAASNODE_ERR_TOO_LARGE;
    default: return FAASNODE_ERR_FAILED;
  }
}

}  // namespace

int HostHttpRequest(faasnode_response* r, const faasnode_http_request* rq, faasnode_http_result* out) {
  if (out == nullptr) return FAASNODE_ERR_INVALID;
  *out = faasnode_http_result{};
  auto rec = std::unique_ptr<HttpCallRecord, HttpCallRecordDeleter>(new HttpCallRecord);
  HttpCallRecord* kept = rec.get();
  r->http_calls.push_back(std::move(rec));
  auto fail = [&](int code, std::string why) {
    kept->error = std::move(why);
    out->error = Str(kept->error);
    return code;
  };
  if (rq == nullptr) return fail(FAASNODE_ERR_INVALID, "http_request: no request");
  if (r->http == nullptr) {
    return fail(FAASNODE_ERR_UNAVAILABLE, "http_request: this host lends no HTTP client (the node does when it "
                                          "serves the function; tools and tests may not)");
  }
  if (!junction::sched::InRuntime()) {
    return fail(FAASNODE_ERR_UNAVAILABLE, "http_request: outbound HTTP needs a uthread of the node's runtime, "
                                          "not a plain thread");
  }
  const junction::http::Method method = junction::http::MethodFromName(View(rq->method));
  if (method == junction::http::Method::kOther || method == junction::http::Method::kConnect) {
    return fail(FAASNODE_ERR_INVALID,
                fmt::format("http_request: method \"{}\" is not GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS or "
                            "TRACE (upper case)",
                            View(rq->method)));
  }
  std::vector<junction::http::Header> headers;
  headers.reserve(rq->num_headers);
  for (std::size_t i = 0; i < rq->num_headers; ++i) {
    headers.push_back({View(rq->headers[i].name), View(rq->headers[i].value)});
  }
  // The call's own timeout, never past the invocation's deadline.
  junction::sched::Deadline deadline = r->deadline;
  if (rq->timeout_ns > 0) {
    constexpr std::uint64_t kMaxNs = std::uint64_t{24} * 3600 * 1'000'000'000;
    const auto own = junction::sched::Clock::now() +
                     std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(rq->timeout_ns, kMaxNs)));
    deadline = std::min(deadline, own);
  }
  auto got = r->http->Do({.method = method,
                          .url = View(rq->url),
                          .headers = headers,
                          .body = View(rq->body),
                          .deadline = deadline});
  if (!got) return fail(ResultFor(got.error().code()), got.error().message());
  kept->response = std::move(*got);
  kept->headers.reserve(kept->response.headers.size());
  for (const auto& [k, v] : kept->response.headers) kept->headers.push_back({Str(k), Str(v)});
  out->status = kept->response.status;
  out->headers = kept->headers.data();
  out->num_headers = kept->headers.size();
  out->body = Str(kept->response.body);
  return FAASNODE_OK;
}

}  // namespace faasnode::store
