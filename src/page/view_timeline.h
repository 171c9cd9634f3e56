/* view_timeline.h - the stack chart's data in sonde view's page: a
 * sampled profile's timeline (p->events) as runs of identical stacks.
 *
 * A run is a thread's consecutive samples of one stack (the same functions
 * from the outermost frame in, whatever lines they were at), none more than
 * two sampling periods after the one before (a longer gap, an idle thread
 * not sampled, ends the run).  Writes, after a member of the page's JSON:
 *
 *   ,"timeline": {"period_us", "samples" (in the recording's timeline),
 *   "kept_samples", "runs" (kept), "cut_us" (0, or where the page's
 *   timeline stops: see below), "end_us" (the last sample's time plus a
 *   period), "capped" (the recording reached SONDE_MAX_SAMPLE_EVENTS),
 *   "stacks": [[func, parent stack]] (stack 0 is the thread's root, func
 *   -1; parents come first), "threads": [{"t": [each run's start in
 *   microseconds, from the previous run's start], "d": [from its first
 *   sample to its last, us], "n": [samples], "s": [stack]}] (one entry per
 *   thread, as p lists them)}
 *
 * The page keeps at most SONDE_VIEW_MAX_RUNS runs, the first in time over
 * all threads: past them (at cut_us) the timeline is left out of the page,
 * so a recording of millions of samples makes a page of a few megabytes. */
#ifndef SONDE_VIEW_TIMELINE_H
#define SONDE_VIEW_TIMELINE_H

#include "../core/buf.h"
#include "../core/profile.h"

#define SONDE_VIEW_MAX_RUNS 200000u

/* Writes p's "timeline" member (nothing when p has no samples in time
 * order).  0, or -1 on out of memory. */
int sonde_view_timeline_put(sonde_buf *b, const sonde_profile *p);

#endif
