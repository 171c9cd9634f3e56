/* timeline.h - a deterministic timeline kept within a budget of slices.
 *
 * A tracer that logs its calls as spans, and the operators placed beneath
 * them (ops.h), make a timeline: each thread's calls and operators as
 * slices, nested as they ran, and the GPU kernels the operators launched
 * on their streams' tracks (sonde run --torch -f chrome).  Of all
 * threads together it keeps the first p->slices_budget slices by start
 * time and counts the others in p->slices_dropped.  The slices a thread
 * keeps are a prefix of its own in start order, so each slice kept has
 * the slices that hold it kept too.  A slice that outlasts the one
 * holding it (two clocks joined, ops.h) is cut at that one's end, so that
 * each thread's slices nest exactly.
 *
 * Memory: twice the budget at most, whatever the number of slices. */
#ifndef SONDE_TIMELINE_H
#define SONDE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "profile.h"

/* The largest budget a timeline takes (24 bytes a slice, twice over). */
#define SONDE_MAX_SLICES (100u * 1000 * 1000)
/* The budget when none is asked for (run --max-events, Profile(torch=True)):
 * a trace of about 150 MB of JSON, which Perfetto's UI opens. */
#define SONDE_DEFAULT_SLICES 1000000

/* Adds one thread's spans and placed ops (both sorted, as sonde_ops_place
 * leaves them; ops whose node is SONDE_NO_NODE are left out) to p's
 * timeline, ticks turned into nanoseconds since ticks0 at ns_per_tick
 * (earlier ones become 0).  Nothing when p->slices_budget is 0.  0, or -1
 * on out of memory (the timeline keeps what it had). */
int sonde_timeline_add(sonde_profile *p, uint32_t thread, const sonde_span *spans,
                       size_t nspans, const sonde_op *ops, size_t nops, uint64_t ticks0,
                       double ns_per_tick);

/* Adds GPU kernels' slices (each's thread SONDE_SLICE_DEVICE | its
 * track, times in nanoseconds since the timeline began; sorted here) to
 * p's timeline within its budget, as sonde_timeline_add adds a thread's.
 * 0, or -1 on out of memory (the timeline keeps what it had). */
int sonde_timeline_add_kernels(sonde_profile *p, sonde_slice *kernels, size_t n);

#endif
