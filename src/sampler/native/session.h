/* session.h - native frames for the sampler: every thread of one process,
 * captured, unwound, named and merged with its Python frames.
 *
 * One tick of one process (sonde_native_sampler.sample): the walker first
 * reads which threads run Python (no stop); then each thread of
 * /proc/PID/task is captured in turn with a short ptrace stop (ptrace.h):
 * registers and a stack copy, and, for a thread that runs Python, its
 * Python frames read again while it is still stopped, so that both halves
 * are of the same moment.  Only that thread stops, only while it is
 * read; everything else runs.  Threads off CPU are not stopped at all
 * unless idle ones are kept.  The copy is unwound after the thread runs
 * again (unwind.h), each frame named once per address (symbols.h: the
 * names are cached here), and merged (merge.h).  Whatever goes wrong is
 * counted in the run's sonde_native_tally: threads gone mid-sample,
 * unwinds by how they ended, merges by result, frames in no mapped
 * object.  Threads that never ran Python (BLAS and OpenMP workers) get
 * native stacks only. */
#ifndef SONDE_NATIVE_SESSION_H
#define SONDE_NATIVE_SESSION_H

#include "../sampler.h"

/* The sampler's native frames (sampler.h's sonde_native_ops). */
extern const sonde_native_ops sonde_native_sampler;

#endif
