// heap_prealloc.h — growing the calling thread's malloc heap ahead of use.
//
// A burst of new connections allocates parsers, header vectors and timer slots from the worker
// thread's malloc arena; when that arena grows, every new page costs a page fault on first
// touch (1-12 µs each in a VM; ~170 of them in a node's first 100-connection burst,
// docs/benchmarks/load.md). PregrowThreadHeap takes `bytes` from the calling thread's arena in
// blocks below the mmap threshold, writes one byte per page (so the pages are mapped in),
// and frees them again: the arena's top chunk then holds them, ready for the next mallocs.
//
// For the pages to stay, free must not hand the top back to the kernel: KeepFreedHeap raises
// glibc's trim threshold (process-wide, M_TRIM_THRESHOLD) to at least 2 × bytes. That also
// stops glibc adapting its mmap threshold (128 KiB at start, raised to each larger block
// freed), so KeepFreedHeap sets it itself, to 4 MiB: otherwise every buffer above 128 KiB
// would be mmapped, faulted in and unmapped on each use. The runtime calls it at Create when
// RuntimeConfig::heap_prealloc is set.
//
// When: after the program's own start-up work. A node's start (SQLite page caches, the
// function table, the HTTP router) allocates megabytes on core 0's arena and would use up a
// heap grown at the core's start; PregrowCoreHeaps, just before serving, leaves every core
// with heap_prealloc free bytes mapped in whatever start-up took. All of these block (system
// calls, page faults): control path only.
#pragma once

#include <cstddef>

#include "junction/base/error.h"

namespace junction::sched {

// Raises the trim threshold so that a freed heap top of up to 2 × `bytes` stays mapped in,
// and fixes the mmap threshold at 4 MiB (see above).
// Returns false if the allocator refused (not glibc): then PregrowThreadHeap's pages may be
// handed back at the first free.
bool KeepFreedHeap(std::size_t bytes);

// Maps `bytes` (rounded up to whole 64 KiB blocks) into the calling thread's malloc arena
// and leaves them free there. Returns the pages it touched.
std::size_t PregrowThreadHeap(std::size_t bytes);

// PregrowThreadHeap(config().heap_prealloc) on every core of the current runtime, each on a
// uthread pinned to its core (so in that core's arena); returns when all are done, with the
// pages touched in all. Nothing to do (0) when heap_prealloc is 0. From a uthread; blocking.
Status<std::size_t> PregrowCoreHeaps();

}  // namespace junction::sched
