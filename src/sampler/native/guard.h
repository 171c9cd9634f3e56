/* guard.h - reads of files mapped into sonde's memory that can shrink under it.
 *
 * sonde maps each object file it unwinds and names (objects.h) and reads
 * its CFI, symbols and lines later, while the file may be truncated: a
 * library replaced by `cp` over it, or a hostile target.  A read past the
 * new end raises SIGBUS.  Code that reads such a mapping runs guarded: a
 * SIGBUS during it comes back as a jump to the guard's sigsetjmp (its
 * faulting address in the guard), never the end of sonde; outside a guard
 * the signal keeps its default action.  Guards nest, one chain a thread.
 *
 *     sonde_native_guard g;
 *     if (sigsetjmp(g.jump, 1)) {          // a mapped file shrank
 *         sonde_native_guard_end(&g);
 *         ... g.fault names the address; give up what was being read ...
 *     } else {
 *         sonde_native_guard_begin(&g);
 *         ... read the mapping ...
 *         sonde_native_guard_end(&g);
 *     }
 *
 * What was being built when the jump came is given up whole (its memory
 * may leak: a fault is a file changing under sonde, once per file). */
#ifndef SONDE_NATIVE_GUARD_H
#define SONDE_NATIVE_GUARD_H

#include <setjmp.h>

typedef struct sonde_native_guard {
    sigjmp_buf jump;
    const void *fault;                  /* the address whose read faulted */
    struct sonde_native_guard *outer;   /* the guard this one is inside, or NULL */
} sonde_native_guard;

/* Arms g (after its sigsetjmp returned 0), installing the SIGBUS handler
 * on first use. */
void sonde_native_guard_begin(sonde_native_guard *g);
/* Disarms g: the guard it was inside is armed again. */
void sonde_native_guard_end(sonde_native_guard *g);

#endif
