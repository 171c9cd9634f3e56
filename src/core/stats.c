/* stats.c - pstats aggregates derived from the calling-context tree.
 *
 * A depth-first walk keeps, for the path from the thread root to the
 * current node, how often each function and each caller->callee edge
 * occurs on it.  A node whose function (edge) already occurs above it is
 * exactly a call cProfile counts as recursive, since the path is the call
 * stack at the time of the call. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

void sonde_stats_init(sonde_stats *s) { memset(s, 0, sizeof *s); }

void sonde_stats_free(sonde_stats *s)
{
    free(s->funcs);
    free(s->edges);
    sonde_u64map_free(&s->edge_index);
    sonde_stats_init(s);
}

int sonde_stats_reserve_funcs(sonde_stats *s, uint32_t nfuncs)
{
    if (nfuncs <= s->nfuncs)
        return 0;
    sonde_fstat *f = sonde_grow(s->funcs, &s->funcs_cap, nfuncs, sizeof *f, UINT32_MAX);
    if (!f)
        return -1;
    memset(f + s->nfuncs, 0, (size_t)(nfuncs - s->nfuncs) * sizeof *f);
    s->funcs = f;
    s->nfuncs = nfuncs;
    return 0;
}

static uint64_t edge_key(uint32_t caller, uint32_t callee)
{
    return (uint64_t)caller << 32 | callee;
}

sonde_edge *sonde_stats_edge(sonde_stats *s, uint32_t caller, uint32_t callee)
{
    uint32_t *slot = sonde_u64map_slot(&s->edge_index,
                                       edge_key(caller, callee), s->nedges);
    if (!slot)
        return NULL;
    if (*slot < s->nedges)
        return &s->edges[*slot];
    sonde_edge *edges = sonde_grow(s->edges, &s->edges_cap, (size_t)s->nedges + 1,
                                   sizeof *edges, UINT32_MAX);
    if (!edges)
        return NULL; /* the slot now names a missing edge: fatal anyway */
    s->edges = edges;
    sonde_edge *e = &s->edges[s->nedges++];
    memset(e, 0, sizeof *e);
    e->caller = caller;
    e->callee = callee;
    return e;
}

/* Adds node n's figures to its function and to the edge from its caller. */
static int account(sonde_stats *s, const sonde_profile *p, uint32_t n,
                   const uint32_t *func_depth, sonde_u64map *edge_depth)
{
    const sonde_node *node = &p->nodes[n];
    double total = (double)node->total * p->seconds_per_tick;
    double self = (double)node->self * p->seconds_per_tick;
    sonde_fstat *f = &s->funcs[node->func];
    f->present = 1;
    f->ncalls += node->calls;
    f->tottime += self;
    if (func_depth[node->func] == 0) {
        f->pcalls += node->calls;
        f->cumtime += total;
    }
    uint32_t caller = p->nodes[node->parent].func;
    if (caller == SONDE_NO_FUNC)
        return 0;
    sonde_edge *e = sonde_stats_edge(s, caller, node->func);
    if (!e)
        return -1;
    e->ncalls += node->calls;
    e->tottime += self;
    uint32_t active = sonde_u64map_get(edge_depth, edge_key(caller, node->func));
    if (active == SONDE_U64MAP_NONE || active == 0) {
        e->pcalls += node->calls;
        e->cumtime += total;
    }
    return 0;
}

/* Enters (delta 1) or leaves (delta -1) node n on the current path. */
static int mark(const sonde_profile *p, uint32_t n, int delta,
                uint32_t *func_depth, sonde_u64map *edge_depth)
{
    const sonde_node *node = &p->nodes[n];
    func_depth[node->func] += (uint32_t)delta;
    uint32_t caller = p->nodes[node->parent].func;
    if (caller == SONDE_NO_FUNC)
        return 0;
    uint32_t *d = sonde_u64map_slot(edge_depth, edge_key(caller, node->func), 0);
    if (!d)
        return -1;
    *d += (uint32_t)delta;
    return 0;
}

static int walk_thread(sonde_stats *s, const sonde_profile *p, uint32_t root,
                       uint32_t *func_depth, sonde_u64map *edge_depth)
{
    /* Iterative pre-order walk: descend to the first child, else move to
     * the next sibling, else climb until an ancestor has one. */
    uint32_t n = p->nodes[root].first_child;
    while (n != SONDE_NO_NODE) {
        if (account(s, p, n, func_depth, edge_depth) < 0)
            return -1;
        if (p->nodes[n].first_child != SONDE_NO_NODE) {
            if (mark(p, n, 1, func_depth, edge_depth) < 0)
                return -1;
            n = p->nodes[n].first_child;
            continue;
        }
        while (n != root && p->nodes[n].next_sibling == SONDE_NO_NODE) {
            n = p->nodes[n].parent;
            if (n != root && mark(p, n, -1, func_depth, edge_depth) < 0)
                return -1;
        }
        n = n == root ? SONDE_NO_NODE : p->nodes[n].next_sibling;
    }
    return 0;
}

int sonde_stats_from_profile(sonde_stats *s, const sonde_profile *p)
{
    if (sonde_stats_reserve_funcs(s, p->nfuncs) < 0)
        return -1;
    uint32_t *func_depth = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *func_depth);
    if (!func_depth)
        return -1;
    sonde_u64map edge_depth;
    sonde_u64map_init(&edge_depth);
    int rc = 0;
    for (uint32_t t = 0; t < p->nthreads && rc == 0; t++)
        rc = walk_thread(s, p, p->threads[t].root, func_depth, &edge_depth);
    free(func_depth);
    sonde_u64map_free(&edge_depth);
    return rc;
}

/* seconds of samples at rate, as a count */
static uint64_t samples_in(double seconds, double rate)
{
    double n = seconds * rate + 0.5;
    return n > 0 ? (uint64_t)n : 0;
}

void sonde_stats_count_samples(sonde_stats *s, double rate)
{
    if (rate <= 0 || s->sampled)
        return;
    for (uint32_t i = 0; i < s->nfuncs; i++) {
        s->funcs[i].ncalls = samples_in(s->funcs[i].cumtime, rate);
        s->funcs[i].pcalls = samples_in(s->funcs[i].tottime, rate);
    }
    for (uint32_t i = 0; i < s->nedges; i++)
        s->edges[i].ncalls = s->edges[i].pcalls = samples_in(s->edges[i].cumtime, rate);
    s->sampled = 1;
}

uint64_t sonde_stats_total_calls(const sonde_stats *s, uint64_t *primitive)
{
    uint64_t n = 0, prim = 0;
    for (uint32_t i = 0; i < s->nfuncs; i++) {
        n += s->funcs[i].ncalls;
        prim += s->funcs[i].pcalls;
    }
    if (primitive)
        *primitive = prim;
    return n;
}

double sonde_stats_total_time(const sonde_stats *s)
{
    double t = 0;
    for (uint32_t i = 0; i < s->nfuncs; i++)
        t += s->funcs[i].tottime;
    return t;
}

int sonde_stats_group_edges(const sonde_stats *s, int by_caller,
                            uint32_t **start_out, uint32_t **order_out)
{
    uint32_t *start = calloc((size_t)s->nfuncs + 2, sizeof *start);
    uint32_t *order = malloc(((size_t)s->nedges + 1) * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return -1;
    }
    /* Counting sort: start[f + 2] counts, then prefix sums shift by one. */
    for (uint32_t e = 0; e < s->nedges; e++)
        start[(by_caller ? s->edges[e].caller : s->edges[e].callee) + 2]++;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        start[f + 2] += start[f + 1];
    for (uint32_t e = 0; e < s->nedges; e++)
        order[start[(by_caller ? s->edges[e].caller : s->edges[e].callee) + 1]++] = e;
    *start_out = start;
    *order_out = order;
    return 0;
}

/* The edges a reachability search may follow over all roots: past this
 * the search stops and callers count as reachable (nothing subtracted). */
#define REACH_BUDGET(nedges) (8 * (uint64_t)(nedges) + 1000000)

typedef struct reach {
    const sonde_stats *s;
    const uint32_t *start, *order;   /* edges by caller */
    uint32_t *seen;                  /* search number that reached a function */
    uint32_t *queue;
    uint32_t search;
    uint64_t budget;
} reach;

/* Marks what f reaches along callee edges with a new search number.  0, or
 * -1 when the budget ran out (the marks are then incomplete). */
static int reach_from(reach *r, uint32_t f)
{
    uint32_t head = 0, tail = 0;
    r->search++;
    r->seen[f] = r->search;
    r->queue[tail++] = f;
    while (head < tail) {
        uint32_t g = r->queue[head++];
        for (uint32_t i = r->start[g]; i < r->start[g + 1]; i++) {
            if (r->budget == 0)
                return -1;
            r->budget--;
            uint32_t c = r->s->edges[r->order[i]].callee;
            if (r->seen[c] != r->search) {
                r->seen[c] = r->search;
                r->queue[tail++] = c;
            }
        }
    }
    return 0;
}

/* The root value of f, called `in_calls` times along caller edges. */
static double root_value(reach *r, const uint32_t *by_callee_start,
                         const uint32_t *by_callee_order, uint32_t f, uint64_t in_calls,
                         int other_caller)
{
    const sonde_fstat *fs = &r->s->funcs[f];
    if (!other_caller)
        return fs->cumtime;
    if (fs->ncalls <= in_calls)
        return 0;
    double value = fs->cumtime;
    if (r->budget == 0 || reach_from(r, f) < 0)
        return value;
    for (uint32_t i = by_callee_start[f]; i < by_callee_start[f + 1]; i++) {
        const sonde_edge *e = &r->s->edges[by_callee_order[i]];
        if (e->caller != f && r->seen[e->caller] != r->search)
            value -= e->cumtime;
    }
    return value > 0 ? value : 0;
}

double *sonde_stats_roots(const sonde_stats *s)
{
    size_t n = s->nfuncs ? s->nfuncs : 1;
    double *roots = calloc(n, sizeof *roots);
    uint64_t *in_calls = calloc(n, sizeof *in_calls);
    uint8_t *other = calloc(n, 1);
    reach r = { .s = s, .seen = calloc(n, sizeof *r.seen), .queue = malloc(n * sizeof *r.queue),
                .budget = REACH_BUDGET(s->nedges) };
    uint32_t *cstart = NULL, *corder = NULL, *start = NULL, *order = NULL;
    int ok = roots && in_calls && other && r.seen && r.queue &&
             sonde_stats_group_edges(s, 0, &cstart, &corder) == 0 &&
             sonde_stats_group_edges(s, 1, &start, &order) == 0;
    if (ok) {
        r.start = start;
        r.order = order;
        for (uint32_t e = 0; e < s->nedges; e++) {
            in_calls[s->edges[e].callee] += s->edges[e].ncalls;
            other[s->edges[e].callee] |= s->edges[e].caller != s->edges[e].callee;
        }
        uint32_t most = UINT32_MAX, found = 0;
        for (uint32_t f = 0; f < s->nfuncs; f++) {
            if (!s->funcs[f].present || !(s->funcs[f].cumtime > 0))
                continue;
            if (most == UINT32_MAX || s->funcs[f].cumtime > s->funcs[most].cumtime)
                most = f;
            roots[f] = root_value(&r, cstart, corder, f, in_calls[f], other[f]);
            found += roots[f] > 0;
        }
        if (!found && most != UINT32_MAX)
            roots[most] = s->funcs[most].cumtime;
    }
    free(in_calls);
    free(other);
    free(r.seen);
    free(r.queue);
    free(cstart);
    free(corder);
    free(start);
    free(order);
    if (!ok) {
        free(roots);
        return NULL;
    }
    return roots;
}
