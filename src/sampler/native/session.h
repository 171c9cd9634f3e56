/* session.h - native frames for the sampler: every thread of one process,
 * captured, unwound, named and merged with its Python frames.
 *
 * One tick of one process (sonde_native_sampler.sample): the walker first
 * reads which threads run Python (no stop); then each thread of
 * /proc/PID/task is captured in turn.  A thread that runs Python is
 * captured with a short ptrace stop (ptrace.h): registers and a stack
 * copy, and its Python frames read again while it is still stopped, so
 * that both halves are of the same moment; only that thread stops, only
 * while it is read.  A thread that runs no Python (BLAS and OpenMP
 * workers) is sampled by perf (perf.h: never stopped) where
 * perf_event_open is allowed and the command samples at a rate (not
 * `dump`), up to 256 such threads; otherwise, and when idle ones are
 * kept and it is idle, it is stopped with ptrace too.  Threads off CPU
 * are not captured at all unless idle ones are kept.  The copy is
 * unwound after the thread runs again (unwind.h), each frame named once
 * per address (symbols.h: the names are cached here), and merged
 * (merge.h).  Whatever goes wrong is counted in the run's
 * sonde_native_tally: threads gone mid-sample, unwinds by how they
 * ended, merges by result, frames in no mapped object.  Threads that
 * never ran Python get native stacks only. */
#ifndef SONDE_NATIVE_SESSION_H
#define SONDE_NATIVE_SESSION_H

#include "../sampler.h"

/* The sampler's native frames (sampler.h's sonde_native_ops). */
extern const sonde_native_ops sonde_native_sampler;

#endif
