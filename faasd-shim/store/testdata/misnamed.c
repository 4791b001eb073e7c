/* misnamed.c — test fixture: a valid function whose descriptor names another function. */
#include "faasnode/function_abi.h"

static int Init(const faasnode_host* h, const faasnode_env* e, void** s) {
  return FAASNODE_OK;
}
static int Handle(void* s, const faasnode_request* rq, faasnode_response* rs) {
  return FAASNODE_OK;
}
static void Fini(void* s) {}

FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function = {
    FAASNODE_ABI_VERSION, sizeof(faasnode_function_descriptor), "someone-else", Init, Handle, Fini};
