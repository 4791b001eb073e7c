/* null_handle.c — test fixture: a current-ABI descriptor whose handle callback is null. */
#include "faasnode/function_abi.h"

static int Init(const faasnode_host* h, const faasnode_env* e, void** s) {
  return FAASNODE_OK;
}
static void Fini(void* s) {}

FAASNODE_EXPORT const faasnode_function_descriptor faasnode_function = {
    FAASNODE_ABI_VERSION, sizeof(faasnode_function_descriptor), "null-handle", Init, 0, Fini};
