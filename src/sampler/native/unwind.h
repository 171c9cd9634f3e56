/* unwind.h - a thread's native stack from its registers and a copy of its stack.
 *
 * The unwinder never touches the thread: it works on what a capture
 * handed over (stack.h: the registers and the bytes from the stack
 * pointer up, taken by the kernel at a perf sample or during a short
 * ptrace stop), so the thread runs again before unwinding starts.  Each
 * step finds the object mapped at the pc (objects.h), the CFI row there
 * (cfi.h), and computes the caller's frame address, registers and return
 * address from it; every memory read must fall inside the copy.  Where no
 * object or no CFI covers a pc (JIT code, the vdso), the step follows
 * the frame pointer instead, and says so.  The stack ends where the CFI
 * marks the return address undefined (_start, clone3) or the return
 * address is 0; any other stop is an incomplete stack.
 *
 * Design (why this and not a library).  Measured with `make bench-native`
 * (bench/native_stop.c: a thread spinning 27 calls deep, -O2 without
 * frame pointers; a 2-core VM shared with other work, one run each):
 *
 *   1 thread, 1000 Hz     stop median   p99      sampler CPU/sample
 *   ptrace seize+copy       13 us      4.1 ms       36 us   (this unwinder)
 *   ptrace held (austin)    12 us      3.8 ms       28 us   (this unwinder)
 *   libunwind-ptrace      1053 us      7.5 ms     1160 us   (stopped while it unwinds)
 *   perf_event_open          0          0          10 us   (no stop at all)
 *
 * libunwind-ptrace keeps the thread stopped for the whole unwind (one
 * PTRACE_PEEKDATA per word read): 80x the stop of copying the stack and
 * unwinding the copy.  elfutils' libdwfl attaches with ptrace the same
 * way (dwfl_linux_proc_attach); it was not measured.  Unwinding a copy
 * is what perf samples need anyway, since the kernel hands over exactly
 * registers and stack bytes; so one unwinder, this one (a bounded CFI
 * reader, ~800 lines, no dependency at sample time), serves both
 * captures.  libdw is used only where speed does not matter and DWARF is
 * large: line tables (symbols.h), read once per address.
 *
 * Captures (session.h says which thread gets which): perf (perf.h) for
 * the threads that run no Python, in record and top: nothing stops, the
 * kernel copies 32 KiB of stack in the timer interrupt (deeper stacks come
 * back cut, counted as SONDE_NATIVE_OUT_OF_COPY); ptrace (ptrace.h) for
 * the threads that run Python (their Python frames are read during the
 * same stop), for `dump`, for idle threads kept (a task-clock event does
 * not fire for a blocked thread), and where perf_event_open is refused.  A
 * ptrace stop waits for the scheduler: with 8 spinning threads on 2 CPUs
 * a capture took 20-50 ms, where perf still cost nothing. */
#ifndef SONDE_NATIVE_UNWIND_H
#define SONDE_NATIVE_UNWIND_H

#include <stdint.h>

#include "objects.h"
#include "outcomes.h"
#include "stack.h"

#define SONDE_NATIVE_MAX_DEPTH 512   /* frames kept per stack */

typedef struct sonde_native_frame {
    uint64_t pc;      /* innermost: where the thread was; others: a return address */
    uint64_t sp;      /* the stack pointer in this frame (its locals lie at and above it) */
    uint8_t via_fp;   /* the step that found this frame's caller used the frame pointer */
} sonde_native_frame;

typedef struct sonde_native_counts {   /* totals over many unwinds */
    uint64_t stacks, frames;
    uint64_t fp_steps;                 /* steps made by frame pointer: no CFI there */
    uint64_t ends[SONDE_NATIVE_ENDS];  /* stacks by enum sonde_native_end */
    uint64_t refreshes;                /* map re-reads for a pc in no known object */
} sonde_native_counts;

/* Unwinds st into frames[0 .. *n), innermost first.  A pc that falls in
 * no known object makes at most one refresh of o per call, and only when
 * sonde_native_objects_stale says the maps are worth reading again.  Returns how the
 * stack ended (enum sonde_native_end); counts are added to c.  An object
 * whose file shrank under sonde while its CFI was read is given up
 * (guard.h), and the stack ends there, as at code without unwind info. */
int sonde_native_unwind(sonde_native_objects *o, const sonde_native_stack *st,
                        sonde_native_frame *frames, uint32_t max, uint32_t *n,
                        sonde_native_counts *c);

#endif
