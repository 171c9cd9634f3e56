/* stack.h - what a native capture hands the unwinder: registers and a stack copy.
 *
 * Filled by a perf sample (perf.h) or during a ptrace stop (ptrace.h);
 * the buffer belongs to the caller and holds at most cap bytes. */
#ifndef SONDE_NATIVE_STACK_H
#define SONDE_NATIVE_STACK_H

#include <stdint.h>

#include "cfi.h"

/* Bytes of stack one capture copies, at most: glibc's default thread
 * stack.  A copy ends where the stack's mapping does, so it is the part
 * in use, however large this is; OpenBLAS's threaded LAPACK calls keep
 * over 512 KiB of work arrays in one frame (dgetrf_parallel). */
#define SONDE_NATIVE_STACK_MAX (8u << 20)

typedef struct sonde_native_stack {
    int tid;
    uint64_t regs[SONDE_CFI_NREGS];   /* DWARF numbering: regs[16] is the pc */
    uint8_t *data;                    /* the copy of [regs[7], regs[7] + len) */
    uint32_t len, cap;
} sonde_native_stack;

#endif
