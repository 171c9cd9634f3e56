/* view_timeline.c - the stack chart's data in sonde view's page; see
 * view_timeline.h. */
#include "view_timeline.h"

#include <stdlib.h>

#include "../core/grow.h"
#include "../core/u64map.h"

typedef struct run {
    uint32_t thread, stack, n;
    uint64_t first_ns, last_ns;
} run;

typedef struct stack {
    uint32_t func;          /* SONDE_NO_FUNC for stack 0, the root */
    uint32_t parent;
} stack;

/* The stacks the kept runs name, each function path once. */
typedef struct stacks {
    stack *at;
    uint32_t n;
    size_t cap;
    sonde_u64map index;     /* parent << 32 | func -> stack */
    uint32_t *of_node;      /* per node of p: 1 + its stack, 0 not known yet */
    uint32_t *chain;        /* nodes whose stack is being found */
    size_t chain_cap;
} stacks;

/* Stack k for (parent, func), made when new; UINT32_MAX on out of memory. */
static uint32_t stack_for(stacks *s, uint32_t parent, uint32_t func)
{
    uint32_t *slot = sonde_u64map_slot(&s->index, (uint64_t)parent << 32 | func, s->n);
    if (!slot || *slot != s->n)
        return slot ? *slot : UINT32_MAX;
    stack *at = sonde_grow(s->at, &s->cap, (size_t)s->n + 1, sizeof *at, UINT32_MAX - 1);
    if (!at)
        return UINT32_MAX;
    s->at = at;
    s->at[s->n] = (stack){ .func = func, .parent = parent };
    return s->n++;
}

/* The stack of node (its functions from the thread's root down);
 * UINT32_MAX on out of memory. */
static uint32_t stack_of(stacks *s, const sonde_profile *p, uint32_t node)
{
    size_t n = 0;
    uint32_t x = node;
    while (x != SONDE_NO_NODE && p->nodes[x].func != SONDE_NO_FUNC && !s->of_node[x]) {
        uint32_t *c = sonde_grow(s->chain, &s->chain_cap, n + 1, sizeof *c, SIZE_MAX / 8);
        if (!c)
            return UINT32_MAX;
        s->chain = c;
        s->chain[n++] = x;
        x = p->nodes[x].parent;
    }
    uint32_t k = x != SONDE_NO_NODE && p->nodes[x].func != SONDE_NO_FUNC ? s->of_node[x] - 1 : 0;
    while (n > 0) {
        x = s->chain[--n];
        if ((k = stack_for(s, k, p->nodes[x].func)) == UINT32_MAX)
            return UINT32_MAX;
        s->of_node[x] = k + 1;
    }
    return k;
}

/* The runs of p's timeline, the first SONDE_VIEW_MAX_RUNS; *cut_ns the
 * time of the first sample left out (0: none).  0, or -1 on out of memory. */
static int find_runs(const sonde_profile *p, stacks *s, run **out, uint32_t *nruns,
                     uint64_t *cut_ns)
{
    uint32_t *open = malloc(p->nthreads * sizeof *open); /* per thread: 1 + its open run */
    run *runs = NULL;
    size_t cap = 0;
    uint32_t n = 0;
    uint64_t gap = (uint64_t)(2e9 / p->sample_rate);
    int rc = open ? 0 : -1;
    for (uint32_t t = 0; open && t < p->nthreads; t++)
        open[t] = 0;
    *cut_ns = 0;
    for (uint64_t i = 0; rc == 0 && i < p->nevents; i++) {
        const sonde_sample_event *e = &p->events[i];
        if (e->thread >= p->nthreads || e->node >= p->nnodes)
            continue;
        uint32_t k = stack_of(s, p, e->node);
        run *r = open[e->thread] ? &runs[open[e->thread] - 1] : NULL;
        if (k == UINT32_MAX) {
            rc = -1;
        } else if (r && r->stack == k && e->t_ns - r->last_ns <= gap) {
            r->last_ns = e->t_ns;
            r->n++;
        } else if (n == SONDE_VIEW_MAX_RUNS) {
            *cut_ns = e->t_ns ? e->t_ns : 1;
            break;
        } else if (!(r = sonde_grow(runs, &cap, (size_t)n + 1, sizeof *r, SONDE_VIEW_MAX_RUNS))) {
            rc = -1;
        } else {
            runs = r;
            runs[n] = (run){ .thread = e->thread, .stack = k, .n = 1, .first_ns = e->t_ns,
                             .last_ns = e->t_ns };
            open[e->thread] = ++n;
        }
    }
    free(open);
    *out = runs;
    *nruns = n;
    return rc;
}

static void put_array(sonde_buf *b, const char *name, const run *runs, uint32_t n,
                      uint32_t thread, int what)
{
    sonde_buf_printf(b, "%s\"%s\": [", what ? ", " : "", name);
    uint64_t before = 0;
    int first = 1;
    for (uint32_t i = 0; i < n; i++) {
        const run *r = &runs[i];
        if (r->thread != thread)
            continue;
        uint64_t start = (r->first_ns + 500) / 1000, v = what == 0 ? start - before
                         : what == 1 ? (r->last_ns + 500) / 1000 - start
                         : what == 2 ? r->n : r->stack;
        before = start;
        sonde_buf_printf(b, "%s%llu", first ? "" : ",", (unsigned long long)v);
        first = 0;
    }
    sonde_buf_putc(b, ']');
}

static void put_runs(sonde_buf *b, const sonde_profile *p, const stacks *s, const run *runs,
                     uint32_t n, uint64_t cut_ns)
{
    uint64_t kept = 0, end = 0;
    for (uint32_t i = 0; i < n; i++)
        kept += runs[i].n;
    for (uint64_t i = 0; i < p->nevents; i++)
        end = p->events[i].t_ns > end ? p->events[i].t_ns : end;
    double period_us = 1e6 / p->sample_rate;
    sonde_buf_puts(b, ",\n\"timeline\": {\"period_us\": ");
    sonde_buf_num(b, period_us);
    sonde_buf_printf(b, ", \"samples\": %llu, \"kept_samples\": %llu, \"runs\": %u, "
                     "\"cut_us\": %llu, \"end_us\": ", (unsigned long long)p->nevents,
                     (unsigned long long)kept, n, (unsigned long long)((cut_ns + 500) / 1000));
    sonde_buf_num(b, (double)end / 1000.0 + period_us);
    sonde_buf_printf(b, ", \"capped\": %s,\n\"stacks\": [", p->events_dropped ? "true" : "false");
    for (uint32_t k = 0; k < s->n; k++)
        sonde_buf_printf(b, "%s[%lld,%u]", k ? (k % 16 ? "," : ",\n") : "",
                         k ? (long long)s->at[k].func : -1LL, s->at[k].parent);
    sonde_buf_puts(b, "],\n\"threads\": [");
    /* one pass over the runs a thread and a list (threads are few) */
    static const char *names[] = { "t", "d", "n", "s" };
    for (uint32_t t = 0; t < p->nthreads; t++) {
        sonde_buf_puts(b, t ? ",\n{" : "\n{");
        for (int what = 0; what < 4; what++)
            put_array(b, names[what], runs, n, t, what);
        sonde_buf_putc(b, '}');
    }
    sonde_buf_puts(b, "]}");
}

int sonde_view_timeline_put(sonde_buf *b, const sonde_profile *p)
{
    if (!p->nevents || !(p->sample_rate > 0) || !p->nthreads)
        return 0;
    stacks s = { .n = 0 };
    sonde_u64map_init(&s.index);
    s.of_node = calloc(p->nnodes ? p->nnodes : 1, sizeof *s.of_node);
    run *runs = NULL;
    uint32_t n = 0;
    uint64_t cut_ns = 0;
    /* stack 0, the root, under a key no frame has */
    int rc = s.of_node && stack_for(&s, UINT32_MAX, SONDE_NO_FUNC) == 0 ? 0 : -1;
    if (rc == 0 && (rc = find_runs(p, &s, &runs, &n, &cut_ns)) == 0)
        put_runs(b, p, &s, runs, n, cut_ns);
    free(runs);
    free(s.at);
    free(s.of_node);
    free(s.chain);
    sonde_u64map_free(&s.index);
    return rc;
}
