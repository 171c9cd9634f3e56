/* ptrace.h - registers and a stack copy of one thread, during a short ptrace stop.
 *
 * Only the thread being read stops, and only while its registers are
 * fetched and its stack copied (one process_vm_readv) and the caller's
 * held() runs (its Python frames read); unwinding happens after it runs
 * again.  The thread is attached with PTRACE_SEIZE, which sends no signal
 * and starts no group stop, then stopped with PTRACE_INTERRUPT; it is
 * detached again before the capture returns, so between samples it is not
 * traced at all (its signals are not delayed, and gdb or strace can
 * attach).  Should sonde die while the thread is stopped, the kernel
 * detaches it and it runs on: a SEIZEd thread that no group stop was
 * started for is never left in state T (the test checks this by killing a
 * capturing process with SIGKILL). */
#ifndef SONDE_NATIVE_PTRACE_H
#define SONDE_NATIVE_PTRACE_H

#include <stdint.h>

#include "stack.h"

/* Stops thread tid of process pid, copies its registers and up to st->cap
 * bytes of its stack into st, calls held(ctx) (when not NULL) while the
 * thread is still stopped (to read its Python frames of the same moment),
 * and lets it go.  *stopped_ns (may be NULL): how long it was stopped,
 * from the interrupt to the detach.  0, or a
 * negative errno: -ESRCH the thread has gone, -EPERM not allowed (Yama,
 * a container without CAP_SYS_PTRACE, or another tracer is attached),
 * -EIO its registers could not be read. */
int sonde_native_ptrace_capture(int pid, int tid, sonde_native_stack *st, void (*held)(void *ctx),
                                void *ctx, uint64_t *stopped_ns);

#endif
