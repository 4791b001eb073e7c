// system_logs.h — GET /system/logs?name=&namespace=&instance=&tail=&follow=&since=: a
// function's log lines as NDJSON, one faas-provider Message per line and per chunk:
// {"name","namespace","instance","timestamp","text"}.
//
// As faas-provider's log handler and faasd's journal requester answer: `tail` must be an
// integer and `since` RFC 3339, else 422 `could not parse the log request` (with what was
// wrong); `follow` is Go's ParseBool (anything else is false); `namespace` defaults to
// openfaas-fn, `since` to five minutes ago; `tail` > 0 keeps the last N lines. 200 with
// Content-Type application/x-ndjson, chunked. With follow=false the stream ends after the
// lines kept now; with follow=true new lines follow (looked for every `poll`) until the client
// goes away or the node drains. A follow with nothing to send writes a keep-alive "\n" every
// `keepalive` (blank lines between Messages: json.Decoder skips them): that write is how a
// client that left is noticed, within about two keep-alives. An unknown function gives an empty stream, as faasd's does.
// Methods other than GET: 405. Basic auth is the router's wrapper (auth::RequireBasicAuth).
#pragma once

#include <chrono>

#include "faasd-shim/api/route.h"
#include "faasd-shim/logs/log_store.h"

namespace faasnode::api {

struct SystemLogsOptions {
  std::chrono::milliseconds poll{100};
  std::chrono::milliseconds keepalive{1000};
  std::chrono::seconds default_since{300};
};

// `store` must outlive the handler and every stream it started.
RouteHandler MakeSystemLogsHandler(const logs::LogStore* store, SystemLogsOptions options = {});

}  // namespace faasnode::api
