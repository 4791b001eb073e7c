/* no_descriptor.c — test fixture: a loadable shared object that exports no function descriptor. */
#include "faasnode/function_abi.h"

FAASNODE_EXPORT int faasnode_function_v0 = 1;
