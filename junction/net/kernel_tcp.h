// kernel_tcp.h — TCP connections and listeners of the kernel backend (internal).
#pragma once

#include "junction/net/kernel_stack.h"
#include "junction/net/socket.h"

namespace junction::net::kernel {

// See KernelStack::DoConnect / DoListen for the contracts (stack.h).
Status<TcpConn> Connect(KernelStack& stack, Endpoint remote, Deadline deadline);
Status<TcpListener> Listen(KernelStack& stack, Endpoint local, const ListenOptions& options);

}  // namespace junction::net::kernel
