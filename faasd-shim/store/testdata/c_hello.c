/* c_hello.c — test fixture: a function written in C against the raw ABI (no C++ wrapper). */
#include <stdlib.h>
#include <string.h>

#include "faasnode/function_abi.h"

struct State {
  const faasnode_host* host;
  unsigned long calls;
};

static faasnode_str S(const char* s) {
  faasnode_str out = {s, strlen(s)};
  return out;
}

static int Init(const faasnode_host* host, const faasnode_env* env, void** state) {
  if (host->abi_version != FAASNODE_ABI_VERSION || host->struct_size < sizeof(faasnode_host)) {
    return FAASNODE_ERR_FAILED;
  }
  struct State* s = calloc(1, sizeof(struct State));
  if (s == 0) return FAASNODE_ERR_FAILED;
  s->host = host;
  host->log(host->logger, FAASNODE_LOG_INFO, S("c-hello init"));
  *state = s;
  return FAASNODE_OK;
}

static int Handle(void* state, const faasnode_request* rq, faasnode_response* rs) {
  struct State* s = state;
  s->calls++;
  if (rq->host != s->host) return 7; /* the host must pass the table init got */
  rq->host->set_status(rs, 201);
  rq->host->add_header(rs, S("Content-Type"), S("text/plain"));
  rq->host->write_body(rs, "hello from C, ", 14);
  rq->host->write_body(rs, rq->method.data, rq->method.size);
  return FAASNODE_OK;
}

static void Fini(void* state) {
  struct State* s = state;
  s->host->log(s->host->logger, FAASNODE_LOG_INFO, S("c-hello fini"));
  free(s);
}

FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function = {
    FAASNODE_ABI_VERSION, sizeof(faasnode_function_descriptor), "c-hello", Init, Handle, Fini};
