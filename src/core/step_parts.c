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

/* a + b, held within int64_t (parts come from files: untrusted). */
static int64_t add_held(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

static uint64_t add_held_u(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int sonde_step_part_add(sonde_profile *p, uint32_t node, uint32_t step, uint64_t calls,
                        uint64_t total, int64_t self_ticks)
{
    uint64_t key = (uint64_t)node << 32 | step;
    uint32_t at = sonde_u64map_get(&p->step_part_at, key);
    if (at == SONDE_U64MAP_NONE) { /* room first, so that the index never names a missing part */
        sonde_step_part *grown = sonde_grow(p->step_parts, &p->step_parts_cap,
                                            (size_t)p->nstep_parts + 1, sizeof *grown,
                                            UINT32_MAX - 1);
        if (!grown)
            return -1;
        p->step_parts = grown;
        if (!sonde_u64map_slot(&p->step_part_at, key, p->nstep_parts))
            return -1;
        at = p->nstep_parts;
        p->step_parts[p->nstep_parts++] = (sonde_step_part){ .node = node, .step = step };
    }
    sonde_step_part *part = &p->step_parts[at];
    part->calls = add_held_u(part->calls, calls);
    part->total = add_held_u(part->total, total);
    part->self = add_held(part->self, self_ticks);
    return 0;
}
