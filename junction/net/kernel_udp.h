// kernel_udp.h — UDP sockets of the kernel backend (internal).
#pragma once

#include "junction/net/kernel_stack.h"
#include "junction/net/socket.h"

namespace junction::net::kernel {

// See KernelStack::DoBindUdp (stack.h). The socket lives in the caller's core's poller.
Status<UdpSocket> BindUdp(KernelStack& stack, Endpoint local);

}  // namespace junction::net::kernel
