/* function_abi.h — the C ABI between the faasnode host and a native function shared object. */
/*
 * A native function is a shared object that exports one symbol, FAASNODE_FUNCTION_SYMBOL
 * ("faasnode_function"), a constant faasnode_function_descriptor. The node dlopen()s the object,
 * reads the descriptor and refuses it unless abi_version equals the node's FAASNODE_ABI_VERSION,
 * struct_size covers this version's fields, name is set and init, handle and fini are all
 * non-null. C++ authors use faasnode/function.h (FAASNODE_EXPORT_FUNCTION) instead of writing
 * the descriptor by hand; C authors write it as in this sketch:
 *
 *   static int Init(const faasnode_host* h, const faasnode_env* e, void** s) { *s = 0; return 0; }
 *   static int Handle(void* s, const faasnode_request* rq, faasnode_response* rs) {
 *     rq->host->write_body(rs, "hi\n", 3);
 *     return FAASNODE_OK;
 *   }
 *   static void Fini(void* s) {}
 *   FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function = {
 *       FAASNODE_ABI_VERSION, sizeof(faasnode_function_descriptor), "hi", Init, Handle, Fini};
 *
 * Life of an instance: init once (with the host table and the environment), handle once per
 * invocation, fini once when the node drops the instance. The node never calls handle before
 * init has returned FAASNODE_OK nor after fini.
 *
 * Threads: every call runs on a uthread of the node's runtime (or, in tests and tools, on a
 * plain thread). A function must never block its kthread — no blocking system calls, no
 * sleep(3), no mutex held across a wait — because the core it runs on serves other
 * invocations meanwhile. It waits through the host: sleep_ns, yield and (v3) http_request park
 * the uthread, not the core. handle may run concurrently for one state on several uthreads (and cores) when the
 * node lets an instance take more than one request in flight: keep the state read-only after
 * init, or guard it. Exceptions and longjmp must never cross this ABI.
 *
 * Memory: every pointer the host passes stays valid for the duration of the call that receives
 * it, except the host table and the environment given to init, which stay valid until fini has
 * returned. Strings are (pointer, length) pairs, not NUL-terminated, and may contain any byte.
 * Everything the function hands to the host (status, headers, body) is copied by the host
 * before the callback returns.
 *
 * Versioning: the first two fields of the descriptor and of the host table (abi_version,
 * struct_size) are frozen for every future version. Any change to the layout or meaning of
 * anything in this header raises FAASNODE_ABI_VERSION. A node loads objects built against any
 * version from FAASNODE_ABI_MIN_VERSION to its own FAASNODE_ABI_VERSION (new versions only
 * append to the host table, so an older object simply never calls what it does not know).
 *   v1: the first release.
 *   v2: faasnode_host.report_energy (energy a function measured itself, e.g. GPU joules).
 *   v3: faasnode_host.http_request (an outbound HTTP/1.1 call through the node's client),
 *       faasnode_http_request / faasnode_http_result, FAASNODE_ERR_TIMED_OUT and
 *       FAASNODE_ERR_UNAVAILABLE.
 */
#ifndef FAASNODE_FUNCTION_ABI_H_
#define FAASNODE_FUNCTION_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. */
#define FAASNODE_ABI_VERSION 3u
/* The oldest ABI this header's node still loads (v1 and v2 objects run unchanged on a v3 node). */
#define FAASNODE_ABI_MIN_VERSION 1u
/* The one symbol a function object exports (a faasnode_function_descriptor). */
#define FAASNODE_FUNCTION_SYMBOL "faasnode_function"
/* Marks the descriptor as exported when the object is built with -fvisibility=hidden. */
#define FAASNODE_EXPORT __attribute__((visibility("default")))

/* Results of the host callbacks and of init/handle. Any other non-zero value returned by init
 * or handle is also a failure; the host reports the number. */
enum faasnode_result {
  FAASNODE_OK = 0,
  FAASNODE_ERR_INVALID = 1,   /* an argument was malformed (a status out of 200..599, ...) */
  FAASNODE_ERR_TOO_LARGE = 2, /* the response body would pass the node's limit */
  FAASNODE_ERR_FAILED = 3,    /* generic failure, for init and handle to return */
  FAASNODE_ERR_TIMED_OUT = 4, /* (v3) http_request: no whole response before its deadline */
  FAASNODE_ERR_UNAVAILABLE = 5 /* (v3) http_request: this host has no HTTP client to lend */
};

enum faasnode_log_level {
  FAASNODE_LOG_DEBUG = 0,
  FAASNODE_LOG_INFO = 1,
  FAASNODE_LOG_WARN = 2,
  FAASNODE_LOG_ERROR = 3
};

/* report_energy (v2): the zones a function may bill itself, and where its figure came from.
 * Only zones the node cannot attribute from its own counters are accepted: the node bills the
 * CPU package/core/dram joules of every invocation itself, so a function reporting those would
 * be counted twice. */
enum faasnode_energy_zone {
  FAASNODE_ENERGY_ZONE_GPU = 1 /* an accelerator's own energy counter */
};
enum faasnode_energy_source {
  FAASNODE_ENERGY_SOURCE_NVML = 1 /* NVML's total-energy counter, read before and after */
};

/* No deadline (faasnode_request.deadline_ns). */
#define FAASNODE_NO_DEADLINE UINT64_MAX

/* A byte string: `size` bytes at `data` (data may be NULL when size is 0). */
typedef struct faasnode_str {
  const char* data;
  size_t size;
} faasnode_str;

/* A name/value pair: a header field, an environment variable, a secret. */
typedef struct faasnode_kv {
  faasnode_str name;
  faasnode_str value;
} faasnode_kv;

/* Opaque host objects: where a response is written, where log lines go. */
typedef struct faasnode_response faasnode_response;
typedef struct faasnode_logger faasnode_logger;

/* The function's environment: its deployment's envVars and secrets (name -> value), in the
 * order the deployment lists them. */
typedef struct faasnode_env {
  const faasnode_kv* vars;
  size_t num_vars;
  const faasnode_kv* secrets;
  size_t num_secrets;
} faasnode_env;

/* http_request (v3): one outbound call. The URL is http://IPV4[:PORT][/path][?query] or
 * http://localhost[:PORT]/...: the node has no DNS resolver and no TLS client. Host comes from
 * the URL; Content-Length, Transfer-Encoding and Connection are the node's and are refused. */
typedef struct faasnode_http_request {
  faasnode_str method; /* "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS" or "TRACE" */
  faasnode_str url;
  const faasnode_kv* headers;
  size_t num_headers;
  faasnode_str body;
  /* The whole call (connect, send, answer) ends within this; 0: at the invocation's deadline
   * (30 s when it has none). Never later than the invocation's deadline. */
  uint64_t timeout_ns;
} faasnode_http_request;

/* What http_request got. Everything it points to is host memory valid until handle returns. */
typedef struct faasnode_http_result {
  int status;                 /* the response's status (100..599); 0 when the call failed */
  const faasnode_kv* headers; /* the response's header fields, in arrival order */
  size_t num_headers;
  faasnode_str body;          /* decoded (chunked bodies joined) */
  faasnode_str error;         /* why the call failed, for a person; empty on FAASNODE_OK */
} faasnode_http_result;

/* The host API. One table per instance, valid from init until fini has returned. */
typedef struct faasnode_host {
  uint32_t abi_version; /* FAASNODE_ABI_VERSION of the node */
  uint32_t struct_size; /* sizeof(faasnode_host) as the node was built */

  /* The instance's log stream: for log calls made from init and fini. */
  const faasnode_logger* logger;

  /* Response writer (handle only). Status: 200..599; default 200. Headers: the name an RFC 9110
   * token, the value without CR, LF or NUL; Content-Length, Transfer-Encoding and Connection
   * are the node's to write and are refused. write_body appends. Each returns FAASNODE_OK or
   * an error; a refused call also fails the invocation (the node answers 500 and logs why). */
  int (*set_status)(faasnode_response* response, int status);
  int (*add_header)(faasnode_response* response, faasnode_str name, faasnode_str value);
  int (*write_body)(faasnode_response* response, const void* data, size_t size);

  /* Writes one line into the function's log stream. Never blocks on I/O. */
  void (*log)(const faasnode_logger* logger, int level, faasnode_str message);

  /* Parks the calling uthread for `ns` nanoseconds; its core runs others meanwhile. On a plain
   * thread it blocks that thread. Not cut short by the request's deadline. */
  void (*sleep_ns)(uint64_t ns);
  /* Lets the other runnable uthreads of this core run, then returns. */
  void (*yield)(void);
  /* CLOCK_MONOTONIC in nanoseconds: the clock of faasnode_request.deadline_ns. */
  uint64_t (*now_ns)(void);

  /* --- v2 (present when abi_version >= 2) --- */

  /* Bills `joules` of measured energy in `zone` (faasnode_energy_zone) from `source`
   * (faasnode_energy_source) to this invocation, on top of what the node attributes itself;
   * the node adds it to the invocation's ledger row and prices its carbon (handle only; calls
   * add up). Refused with FAASNODE_ERR_INVALID — which also fails the invocation — for an
   * unknown zone or source, or joules that are negative, NaN or infinite. Report only what was
   * measured: where there is no counter, report nothing (the zone then stays absent). */
  int (*report_energy)(faasnode_response* response, int zone, double joules, int source);

  /* --- v3 (present when abi_version >= 3) --- */

  /* Sends `request` and waits for the whole response, parking the calling uthread (its core
   * serves others meanwhile; never the kthread). Handle only. Returns FAASNODE_OK when a
   * response arrived, whatever its status; otherwise `result->error` says why:
   * FAASNODE_ERR_INVALID (a malformed URL, method or header: nothing was sent),
   * FAASNODE_ERR_TIMED_OUT, FAASNODE_ERR_TOO_LARGE (the response passed the node's limit),
   * FAASNODE_ERR_UNAVAILABLE (no client here: a tool or test host, or a plain thread), or
   * FAASNODE_ERR_FAILED (refused, reset, a malformed response). Unlike the response writer's
   * calls, a failed http_request does not fail the invocation: the function decides. */
  int (*http_request)(faasnode_response* response, const faasnode_http_request* request,
                      faasnode_http_result* result);
} faasnode_host;

/* One invocation. Valid for the duration of the handle call that receives it. */
typedef struct faasnode_request {
  const faasnode_host* host; /* the same table init received */
  const faasnode_env* env;   /* the same environment init received */
  faasnode_str method;       /* "GET", "POST", ... */
  faasnode_str path;         /* after /function/NAME: "" or "/..." */
  faasnode_str query;        /* raw, without '?'; "" when there is none */
  const faasnode_kv* headers;
  size_t num_headers;
  faasnode_str body;
  uint64_t deadline_ns;          /* now_ns() clock; FAASNODE_NO_DEADLINE when none */
  const faasnode_logger* logger; /* this invocation's log stream */
  uint64_t call_id;              /* the node's id for this invocation (for logs) */
} faasnode_request;

/* What a function object exports under FAASNODE_FUNCTION_SYMBOL. */
typedef struct faasnode_function_descriptor {
  uint32_t abi_version; /* FAASNODE_ABI_VERSION the object was built against */
  uint32_t struct_size; /* sizeof(faasnode_function_descriptor) as the object was built */
  const char* name;     /* NUL-terminated; must match the name the node stores it under */
  /* Builds the state; *state may be left NULL. Returns FAASNODE_OK, or non-zero to refuse to
   * start (log why through host->log first). */
  int (*init)(const faasnode_host* host, const faasnode_env* env, void** state);
  /* Serves one request. Returns FAASNODE_OK once the response is written; non-zero makes the
   * node discard what was written and answer 500. */
  int (*handle)(void* state, const faasnode_request* request, faasnode_response* response);
  /* Frees the state. */
  void (*fini)(void* state);
} faasnode_function_descriptor;

#ifdef __cplusplus
}
#endif

#endif /* FAASNODE_FUNCTION_ABI_H_ */
