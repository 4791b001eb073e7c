/* wrong_abi.c — test fixture: a function object built against a future SDK ABI (v99). */
#include "faasnode/function_abi.h"

static int Init(const faasnode_host* h, const faasnode_env* e, void** s) {
  return FAASNODE_OK;
}
static int Handle(void* s, const faasnode_request* rq, faasnode_response* rs) {
  return FAASNODE_OK;
}
static void Fini(void* s) {}

/* What an object built with a v99 SDK header would export: the frozen prefix says v99. */
FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function = {
    99u, sizeof(faasnode_function_descriptor), "wrong-abi", Init, Handle, Fini};
