/* call_cycles.h - which functions of a call graph call each other back.
 *
 * The strongly connected components of the caller->callee graph of a
 * .prof file's stats (Tarjan's, without recursion, so a graph of any depth
 * is walked in bounded stack): two functions share a component when each
 * reaches the other, as a dispatcher and the plugins that call it again
 * do.  The rebuilt call tree (time_tree_rebuild.c) reads them to tell a
 * dispatcher, whose callee edges hold the time of every nesting level,
 * from a function whose callees share its own time. */
#ifndef SONDE_CALL_CYCLES_H
#define SONDE_CALL_CYCLES_H

#include <stdint.h>

#include "stats.h"

/* Per function, its component's number, callees' components numbered
 * before their callers' (Tarjan closes a component after all it reaches),
 * and 1 in cyclic when it is on a cycle: its component holds more than one
 * function, or it calls itself.  Both malloc'd (at least one entry) for
 * the caller to free.  0, or -1 on out of memory. */
int sonde_call_cycles(const sonde_stats *s, uint32_t **component, uint8_t **cyclic);

#endif
