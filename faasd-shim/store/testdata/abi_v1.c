/* abi_v1.c — test fixture: a function object as a v1 SDK header built it (before
 * report_energy was appended to the host table): it must still load and run. */
#include "faasnode/function_abi.h"

static int Init(const faasnode_host* h, const faasnode_env* e, void** s) {
  *s = 0;
  return h->struct_size >= 8 ? FAASNODE_OK : FAASNODE_ERR_FAILED;
}
static int Handle(void* s, const faasnode_request* rq, faasnode_response* rs) {
  return rq->host->write_body(rs, "v1\n", 3);
}
static void Fini(void* s) {}

/* The v1 prefix: abi_version 1, the (unchanged) v1 descriptor size. */
FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function = {
    1u, sizeof(faasnode_function_descriptor), "abi-v1", Init, Handle, Fini};
