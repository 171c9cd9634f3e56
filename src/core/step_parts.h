/* step_parts.h - a torch profile's operators split by training step.
 *
 * sonde run --torch marks training steps (sonde_step: each ends with the
 * program's optimizer.step() or sonde.step()).  The tree sums an
 * operator's calls over the whole run; its parts (sonde_step_part) keep,
 * per node and step, the calls that began in that step, for `sonde report
 * --ops --by-step`: they are what torch.profiler's table would show of
 * that step alone.  Kept in the profile, written to sonde's JSON
 * ("torch_step_nodes") and read back. */
#ifndef SONDE_STEP_PARTS_H
#define SONDE_STEP_PARTS_H

#include <stdint.h>

#include "profile.h"

/* The number of the step of p->steps in which time t_ns (the steps'
 * clock) falls, from its start to its end; SONDE_NO_STEP outside them
 * all.  The steps are in time order. */
uint32_t sonde_step_at(const sonde_profile *p, uint64_t t_ns);

/* Adds to node's part of step (made when new): calls, total ticks, and
 * self_ticks to its self time (less than 0 to take time away).  0, or -1
 * on out of memory. */
int sonde_step_part_add(sonde_profile *p, uint32_t node, uint32_t step, uint64_t calls,
                        uint64_t total, int64_t self_ticks);

#endif
