/* timeline.c - a deterministic timeline kept within a budget; see
 * timeline.h. */
#include "timeline.h"

#include <stdlib.h>

#include "grow.h"

static uint64_t ns_of(uint64_t ticks, uint64_t ticks0, double ns_per_tick)
{
    return ticks > ticks0 ? (uint64_t)((double)(ticks - ticks0) * ns_per_tick) : 0;
}

/* Earlier start first; of two starting together, the longer (outer) one. */
static int by_start(const void *a, const void *b)
{
    const sonde_slice *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Whether the next slice is the span (else the op): the earlier start,
 * the longer on a tie, the span on a full tie (a call holds what it runs). */
static int span_first(const sonde_span *s, const sonde_op *o)
{
    if (s->start != o->start)
        return s->start < o->start;
    return s->end >= o->end;
}

/* The first `take` slices of the thread, merged in start order and cut to
 * nest, appended to p->slices (which has room).  0, or -1. */
static int merge(sonde_profile *p, uint32_t thread, const sonde_span *spans, size_t nspans,
                 const sonde_op *ops, size_t nops, uint64_t take, uint64_t ticks0,
                 double ns_per_tick)
{
    uint64_t *open = NULL; /* the ends of the slices holding the next one */
    size_t depth = 0, cap = 0, i = 0, j = 0;
    for (uint64_t k = 0; k < take; k++) {
        while (j < nops && ops[j].node == SONDE_NO_NODE)
            j++;
        int span = i < nspans && (j == nops || span_first(&spans[i], &ops[j]));
        uint64_t start = span ? spans[i].start : ops[j].start;
        uint64_t end = span ? spans[i].end : ops[j].end;
        sonde_slice s = { .start_ns = ns_of(start, ticks0, ns_per_tick),
                          .end_ns = ns_of(end, ticks0, ns_per_tick), .thread = thread,
                          .node = span ? spans[i].node : ops[j].node };
        span ? i++ : j++;
        while (depth && open[depth - 1] <= s.start_ns && open[depth - 1] < s.end_ns)
            depth--;
        if (s.end_ns < s.start_ns)
            s.end_ns = s.start_ns;
        if (depth && s.end_ns > open[depth - 1])
            s.end_ns = open[depth - 1];
        uint64_t *grown = sonde_grow(open, &cap, depth + 1, sizeof *open, SIZE_MAX);
        if (!grown) {
            free(open);
            return -1;
        }
        open = grown;
        open[depth++] = s.end_ns;
        p->slices[p->nslices++] = s;
    }
    free(open);
    return 0;
}

/* Room for `take` more slices within twice the budget; 0, or -1. */
static int make_room(sonde_profile *p, uint64_t take)
{
    sonde_slice *grown = sonde_grow(p->slices, &p->slices_cap, (size_t)(p->nslices + take),
                                    sizeof *grown, (size_t)(2 * p->slices_budget));
    if (!grown)
        return -1;
    p->slices = grown;
    return 0;
}

/* Past the budget: the first slices of all by start kept, the rest counted. */
static void keep_budget(sonde_profile *p)
{
    if (p->nslices > p->slices_budget) {
        qsort(p->slices, (size_t)p->nslices, sizeof *p->slices, by_start);
        p->slices_dropped += p->nslices - p->slices_budget;
        p->nslices = p->slices_budget;
    }
}

int sonde_timeline_add_kernels(sonde_profile *p, sonde_slice *kernels, size_t n)
{
    uint64_t budget = p->slices_budget, take = n < budget ? n : budget;
    if (take == 0)
        return 0;
    if (make_room(p, take) < 0)
        return -1;
    qsort(kernels, n, sizeof *kernels, by_start);
    for (uint64_t k = 0; k < take; k++)
        p->slices[p->nslices++] = kernels[k];
    p->slices_dropped += n - take;
    keep_budget(p);
    return 0;
}

int sonde_timeline_add(sonde_profile *p, uint32_t thread, const sonde_span *spans,
                       size_t nspans, const sonde_op *ops, size_t nops, uint64_t ticks0,
                       double ns_per_tick)
{
    uint64_t budget = p->slices_budget, usable = nspans;
    if (budget == 0)
        return 0;
    for (size_t j = 0; j < nops; j++)
        usable += ops[j].node != SONDE_NO_NODE;
    uint64_t take = usable < budget ? usable : budget;
    if (take == 0)
        return 0;
    if (make_room(p, take) < 0)
        return -1;
    uint64_t before = p->nslices;
    if (merge(p, thread, spans, nspans, ops, nops, take, ticks0, ns_per_tick) < 0) {
        p->nslices = before;
        return -1;
    }
    p->slices_dropped += usable - take;
    keep_budget(p);
    return 0;
}
