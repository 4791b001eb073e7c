/* symbol_is_code.c — test fixture: the descriptor's symbol name on a function, not on data. */
#include "faasnode/function_abi.h"

FAASNODE_EXPORT void faasnode_function(void) {}
