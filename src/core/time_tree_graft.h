/* time_tree_graft.h - a .prof file's rebuilt call tree made the profile's
 * own calling-context tree, so that the writers that need one (collapsed
 * stacks, pprof, speedscope) take a .prof as they take a recorded run. */
#ifndef SONDE_TIME_TREE_GRAFT_H
#define SONDE_TIME_TREE_GRAFT_H

#include "profile.h"
#include "stats.h"
#include "time_tree.h"

/* Rebuilds p's tree from s (sonde_time_tree_from_stats) and adds it to p,
 * which must have no thread yet, as one thread named "rebuilt from the
 * callers", ticks of a nanosecond; node calls are left 0 (a .prof does not
 * say how often each path ran).  *cut (when not NULL) is set when the
 * rebuild's bounds left branches out.  0, or -1 on out of memory. */
int sonde_time_tree_graft(sonde_profile *p, const sonde_stats *s, int *cut);

#endif
