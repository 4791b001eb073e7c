// callback_client.h — POSTs an async call's result to its X-Callback-Url over the node's own
// socket API (junction/net) with the junction/http request writer and response parser.
//
// Only what a node can reach without a resolver: `http://` URLs whose host is an IPv4 literal
// or `localhost` (127.0.0.1), with an optional port (default 80). ParseCallbackUrl says so in
// its error, and the async endpoint answers 400 with that message before anything is queued.
//
// Threads: PostCallback runs on a uthread and parks while connecting, writing and reading; it
// never blocks the kthread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "junction/base/error.h"
#include "junction/net/endpoint.h"
#include "junction/net/stack.h"
#include "junction/sched/tsc.h"

namespace faasnode::async {

struct CallbackUrl {
  junction::net::Endpoint endpoint;
  std::string host;    // the Host header: authority as written in the URL
  std::string target;  // path and query: "/" when the URL has none
};

// The URLs junction::http::ParseHttpUrl takes (the node's HTTP client). Errors
// (kInvalidArgument, naming X-Callback-Url): not http://, no host, a host that is not an IPv4
// literal or localhost, a bad port, user info, whitespace or control bytes.
junction::Status<CallbackUrl> ParseCallbackUrl(std::string_view url);

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// POSTs `body` with `headers` (framing fields and fields the writer would refuse are skipped)
// to `url` (one ParseCallbackUrl accepts) through the node's HTTP client, one connection per
// call, and returns the status the receiver answered. Errors: the client's (connect, read and
// write failures, a malformed or missing response: kIo; kTimedOut past `deadline`).
junction::Status<int> PostCallback(junction::net::Stack& stack, std::string_view url, const HeaderList& headers,
                                   std::string_view body, junction::sched::Deadline deadline);

}  // namespace faasnode::async
