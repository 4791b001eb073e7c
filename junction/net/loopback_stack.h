// loopback_stack.h — the "loopback" backend: a whole stack in memory, for unit tests.
//
// No kernel sockets and no packets: a listener is an entry in the stack's registry keyed by
// endpoint, a connection is a pair of bounded byte Pipes (loopback_pipe.h) with TCP's
// end-of-stream, shutdown, close and reset rules, a UDP socket is a bounded queue of
// datagrams. Every wait parks the uthread through the sched wait queues. Connect to an endpoint
// nobody listens on is refused; a connection waits while the listener's backlog is full.
// Endpoints are only names here: any address works, 0.0.0.0 listeners match every address.
// Sockets of one loopback stack reach only sockets of the same stack.
#pragma once

#include <memory>

#include "junction/net/stack.h"

namespace junction::net {

// Any thread; sockets are used from uthreads. Never fails today.
Status<std::unique_ptr<Stack>> CreateLoopbackStack(const StackOptions& options);

}  // namespace junction::net
