/* step_parts.c - a torch profile's operators split by training step; see
 * step_parts.h. */
#include "step_parts.h"

#include "grow.h"

uint32_t sonde_step_at(const sonde_profile *p, uint64_t t_ns)
{
    uint32_t lo = 0, hi = p->nsteps;
    while (lo < hi) { /* the first step ending at or after t_ns */
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->steps[mid].end_ns < t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nsteps && p->steps[lo].start_ns <= t_ns ? p->steps[lo].number : SONDE_NO_STEP;
}

int sonde_step_part_add(sonde_profile *p, uint32_t node, uint32_t step, uint64_t calls,
                        uint64_t total, int64_t self_ticks)
{
    uint32_t *at = sonde_u64map_slot(&p->step_part_at, (uint64_t)node << 32 | step,
                                     p->nstep_parts);
    if (!at)
        return -1;
    if (*at == p->nstep_parts) {
        sonde_step_part *grown = sonde_grow(p->step_parts, &p->step_parts_cap,
                                            (size_t)p->nstep_parts + 1, sizeof *grown,
                                            UINT32_MAX - 1);
        if (!grown)
            return -1;
        p->step_parts = grown;
        p->step_parts[p->nstep_parts++] = (sonde_step_part){ .node = node, .step = step };
    }
    sonde_step_part *part = &p->step_parts[*at];
    part->calls += calls;
    part->total += total;
    part->self += self_ticks;
    return 0;
}
