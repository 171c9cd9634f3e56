/* time_tree_rebuild.c - the call tree rebuilt from a .prof file's stats.
 *
 * A .prof holds, per function, its calls, tottime and cumtime, and per
 * caller->callee edge the same figures: no call paths.  The tree is
 * expanded from the roots of the call graph (sonde_stats_roots), biggest
 * node first, so that the node bound drops the smallest branches.
 *
 * A node of function f worth v seconds offers each callee c a share of
 * itself, and the offers are served in an order (below) while room is left,
 * so children never outgrow their parent:
 *   - at f's topmost frame on the path, c is offered cumtime(f->c) scaled
 *     by v / cumtime(f).  When no cycle leads back to f, the offers fit in
 *     v.  When f is a dispatcher entered again through its plugins
 *     (pluggy's hook call, an AST visitor: call_cycles.h), its edges hold
 *     the time of every nesting level, more than its own cumtime, so the
 *     callees are served one at a time, each time the one whose offer is
 *     closest to the room left: the plugin this call ran took about as
 *     long as the call, and the plugins nested in it (the test body under
 *     pytest's runtestloop) are left for the nested frames;
 *   - at a frame of f nested in another frame of f (a cycle is a frame
 *     that recurs, not an end), cumtime(f) does not hold the nested calls,
 *     so each callee is offered its whole edge time, served the same way,
 *     the callees the path has not yet reached from f first.
 * A path never ends in the same cycle twice over (a b a b, then a: pure
 * recursion), which bounds it with the depth and node caps.
 *
 * Then every function is given its tottime: each node's self time is what
 * its children leave of it, and a function's self times are scaled to add
 * up to its tottime (a function left with no frame gets one under its
 * biggest caller's, or, past the node bound, stays in the root's own
 * time); totals are summed again from the leaves.  So the root
 * is the profile's total time, no function's own time is lost, and along a
 * path of functions no cycle leads back to, the frames are their cumtime. */
#include "time_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "call_cycles.h"
#include "grow.h"

/* Callees served by closeness to the room left, at most, per group. */
#define MAX_PICKS 64
/* Rounds of fitting widths to cumtimes and self times to tottimes. */
#define FIT_ROUNDS 1

typedef struct pending {
    uint32_t node;
    uint32_t depth;
} pending;

typedef struct offer {
    uint32_t callee;
    double value;
    int group;        /* served in increasing group */
    int taken;
} offer;

typedef struct rebuild {
    sonde_time_tree *t;
    const sonde_stats *s;
    const uint32_t *start, *order;   /* edges grouped by caller */
    const uint32_t *component;       /* call_cycles.h */
    const uint8_t *cyclic;
    pending *heap;                   /* nodes to expand, biggest total on top */
    uint32_t nheap;
    size_t heap_cap;
    offer *offers;
    size_t offers_cap;
    uint32_t path[SONDE_TIME_TREE_MAX_DEPTH + 1];   /* functions, root's child first */
    uint32_t *last_at;               /* per function: its last index on the path */
    uint32_t *on_path, *reached;     /* per function: == stamp when on the path /
                                        reached from the expanded function on it */
    uint32_t stamp;
    double smallest;                 /* nodes worth less are left out */
} rebuild;

/* ---- the heap of nodes to expand ---- */

static int bigger(const rebuild *r, uint32_t a, uint32_t b)
{
    return r->t->nodes[r->heap[a].node].total > r->t->nodes[r->heap[b].node].total;
}

static void swap_pending(pending *a, pending *b)
{
    pending x = *a;
    *a = *b;
    *b = x;
}

static int heap_push(rebuild *r, uint32_t node, uint32_t depth)
{
    pending *h = sonde_grow(r->heap, &r->heap_cap, (size_t)r->nheap + 1, sizeof *h, UINT32_MAX);
    if (!h)
        return -1;
    r->heap = h;
    uint32_t i = r->nheap++;
    r->heap[i] = (pending){ .node = node, .depth = depth };
    while (i > 0 && bigger(r, i, (i - 1) / 2)) {
        swap_pending(&r->heap[i], &r->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return 0;
}

static pending heap_pop(rebuild *r)
{
    pending top = r->heap[0];
    r->heap[0] = r->heap[--r->nheap];
    for (uint32_t i = 0;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < r->nheap && bigger(r, l, m))
            m = l;
        if (l + 1 < r->nheap && bigger(r, l + 1, m))
            m = l + 1;
        if (m == i)
            break;
        swap_pending(&r->heap[i], &r->heap[m]);
        i = m;
    }
    return top;
}

/* ---- expanding one node ---- */

/* A node for function f worth value under parent, queued for expansion. */
static int add_rebuilt(rebuild *r, uint32_t f, uint32_t parent, double value, uint32_t depth)
{
    if (r->t->n >= SONDE_TIME_TREE_MAX_NODES) {
        r->t->cut = 1;
        return 0;
    }
    if (sonde_time_tree_add(r->t, (int32_t)f, parent, value, 0) < 0)
        return -1;
    if (depth < SONDE_TIME_TREE_MAX_DEPTH)
        return heap_push(r, r->t->n - 1, depth);
    if (r->start[f] < r->start[f + 1])
        r->t->cut = 1;
    return 0;
}

/* Reads the path from the root down to node (depth frames) into r->path,
 * and stamps what is on it.  1 when the node's function is nested in
 * another frame of itself. */
static int read_path(rebuild *r, uint32_t node, uint32_t depth)
{
    const sonde_time_tree *t = r->t;
    uint32_t i = depth;
    for (uint32_t a = node; a != 0 && i > 0; a = t->nodes[a].parent)
        r->path[--i] = (uint32_t)t->nodes[a].func;
    r->stamp++;
    uint32_t f = r->path[depth - 1];
    int nested = 0;
    for (i = 0; i < depth; i++) {
        uint32_t g = r->path[i];
        r->on_path[g] = r->stamp;
        r->last_at[g] = i;
        if (g == f && i + 1 < depth) {
            nested = 1;
            r->reached[r->path[i + 1]] = r->stamp;
        }
    }
    return nested;
}

/* 1 when calling c at the end of the path would repeat the cycle that
 * ends there (a b a b, then a). */
static int repeats_cycle(const rebuild *r, uint32_t depth, uint32_t c)
{
    if (r->on_path[c] != r->stamp)
        return 0;
    uint32_t j = r->last_at[c], len = depth - j;
    return j >= len && memcmp(&r->path[j], &r->path[j - len], len * sizeof r->path[0]) == 0;
}

static int by_value_down(const void *x, const void *y)
{
    const offer *a = x, *b = y;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return a->callee < b->callee ? -1 : a->callee > b->callee;
}

/* Collects f's callees' offers at the node at the end of the path.  The
 * count, or -1 on out of memory. */
static int64_t gather_offers(rebuild *r, uint32_t f, double value, uint32_t depth, int nested)
{
    const sonde_stats *s = r->s;
    double cum = s->funcs[f].cumtime;
    double scale = nested ? 1 : cum > 0 ? value / cum : 0;
    uint32_t n = 0;
    for (uint32_t k = r->start[f]; k < r->start[f + 1]; k++) {
        const sonde_edge *ed = &s->edges[r->order[k]];
        uint32_t c = ed->callee;
        double v = ed->cumtime * scale;
        if (c == f || !(v >= r->smallest) || !(s->funcs[c].cumtime > 0) ||
            repeats_cycle(r, depth, c))
            continue;
        offer *o = sonde_grow(r->offers, &r->offers_cap, (size_t)n + 1, sizeof *o, UINT32_MAX);
        if (!o)
            return -1;
        r->offers = o;
        int group = nested && r->reached[c] == r->stamp;
        r->offers[n++] = (offer){ .callee = c, .value = v, .group = group };
    }
    return n;
}

/* The untaken offer of group g whose value is closest to room (by ratio),
 * or n when none is left.  Offers within NEAR of the closest count as
 * close, and the largest of them is taken: a call nests the plugins it
 * runs, each a little shorter than the one running it, so when the room is
 * a little short of them all (it was shared by a ratio above), the
 * outermost is still the one this call ran. */
#define NEAR 0.1
static uint32_t closest(const rebuild *r, uint32_t n, int g, double room)
{
    double best_gap = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        const offer *o = &r->offers[i];
        double gap = fabs(log(o->value / room));
        if (!o->taken && o->group == g && gap < best_gap)
            best_gap = gap;
    }
    uint32_t best = n;
    for (uint32_t i = 0; i < n; i++) {
        const offer *o = &r->offers[i];
        if (!o->taken && o->group == g && fabs(log(o->value / room)) <= best_gap + NEAR &&
            (best == n || o->value > r->offers[best].value))
            best = i;
    }
    return best;
}

/* Serves offer i out of *room as a child of at.  0, or -1 on out of memory. */
static int serve(rebuild *r, uint32_t i, pending at, double *room)
{
    double v = r->offers[i].value < *room ? r->offers[i].value : *room;
    r->offers[i].taken = 1;
    if (!(v >= r->smallest))
        return 0;
    *room -= v;
    return add_rebuilt(r, r->offers[i].callee, at.node, v, at.depth + 1);
}

static int expand(rebuild *r, pending at)
{
    uint32_t f = (uint32_t)r->t->nodes[at.node].func;
    double room = r->t->nodes[at.node].total;
    int nested = read_path(r, at.node, at.depth);
    int64_t n = gather_offers(r, f, room, at.depth, nested);
    if (n < 0)
        return -1;
    if (!r->cyclic[f]) {
        qsort(r->offers, (size_t)n, sizeof *r->offers, by_value_down);
        for (uint32_t i = 0; i < n && room >= r->smallest; i++)
            if (serve(r, i, at, &room) < 0)
                return -1;
        return 0;
    }
    for (int g = 0; g < 2; g++)
        for (int picks = 0; picks < MAX_PICKS && room >= r->smallest; picks++) {
            uint32_t i = closest(r, (uint32_t)n, g, room);
            if (i == n)
                break;
            if (serve(r, i, at, &room) < 0)
                return -1;
        }
    return 0;
}

/* ---- widening each function to its cumtime ---- */

/* The product of the factors of node's ancestors' functions (node's own
 * left out). */
static double above(const sonde_time_tree *t, const double *factor, uint32_t node)
{
    double x = 1;
    for (uint32_t a = t->nodes[node].parent; a != 0; a = t->nodes[a].parent)
        x *= factor[t->nodes[a].func];
    return x;
}

/* Shares taken by ratio lose or gain a little at each level (a node shares
 * its function's callees in the proportions of all its calls), and less
 * above a dispatcher, whose edges hold every nesting level.  A function no
 * cycle leads back to has, over all its frames, exactly its cumtime: each
 * such function's frames, with what is under them, are scaled to it,
 * callers before callees (Tarjan numbers callees' components first), so a
 * callee is fitted within frames already fitted.  0, or -1 on out of
 * memory. */
static int fit_cumtimes(rebuild *r)
{
    sonde_time_tree *t = r->t;
    const sonde_stats *s = r->s;
    size_t nf = s->nfuncs ? s->nfuncs : 1;
    double *factor = malloc(nf * sizeof *factor);
    uint32_t *start = calloc(nf + 2, sizeof *start), *by_func = malloc(t->n * sizeof *by_func);
    uint32_t *in_comp = calloc(nf + 2, sizeof *in_comp), *members = malloc(nf * sizeof *members);
    int rc = -1;
    if (!factor || !start || !by_func || !in_comp || !members)
        goto out;
    /* nodes grouped by function, functions by component: counting sorts */
    for (uint32_t i = 1; i < t->n; i++)
        start[t->nodes[i].func + 2]++;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        factor[f] = 1;
        start[f + 2] += start[f + 1];
        in_comp[r->component[f] + 2]++;
    }
    for (uint32_t i = 1; i < t->n; i++)
        by_func[start[t->nodes[i].func + 1]++] = i;
    for (uint32_t c = 0; c < s->nfuncs; c++)
        in_comp[c + 2] += in_comp[c + 1];
    for (uint32_t f = 0; f < s->nfuncs; f++)
        members[in_comp[r->component[f] + 1]++] = f;
    for (uint32_t k = s->nfuncs; k-- > 0;) { /* callers' components first */
        uint32_t f = members[k];
        double cum = s->funcs[f].cumtime, drawn = 0;
        if (r->cyclic[f] || !(cum > 0))
            continue;
        for (uint32_t j = start[f]; j < start[f + 1]; j++)
            drawn += t->nodes[by_func[j]].total * above(t, factor, by_func[j]);
        if (drawn > 0)
            factor[f] = cum / drawn;
    }
    for (uint32_t i = 1; i < t->n; i++)
        t->nodes[i].total *= above(t, factor, i) * factor[t->nodes[i].func];
    rc = 0;
out:
    free(factor);
    free(start);
    free(by_func);
    free(in_comp);
    free(members);
    return rc;
}

/* ---- giving every function its tottime ---- */

/* Each node's self time: what its children leave of its total. */
static int leftovers(sonde_time_tree *t)
{
    double *below = calloc(t->n ? t->n : 1, sizeof *below);
    if (!below)
        return -1;
    for (uint32_t i = 1; i < t->n; i++)
        below[t->nodes[i].parent] += t->nodes[i].total;
    for (uint32_t i = 1; i < t->n; i++) {
        double left = t->nodes[i].total - below[i];
        t->nodes[i].self = left > 0 ? left : 0;
    }
    t->nodes[0].self = 0;
    free(below);
    return 0;
}

/* The node a function without one goes under: the biggest node of its
 * caller with the most time in it (0, the root, when none has a node). */
static uint32_t home_of(const rebuild *r, const uint32_t *by_callee_start,
                        const uint32_t *by_callee_order, const uint32_t *biggest, uint32_t f)
{
    uint32_t home = 0;
    double most = -1;
    for (uint32_t k = by_callee_start[f]; k < by_callee_start[f + 1]; k++) {
        const sonde_edge *e = &r->s->edges[by_callee_order[k]];
        if (biggest[e->caller] != 0 && e->cumtime > most) {
            most = e->cumtime;
            home = biggest[e->caller];
        }
    }
    return home;
}

/* Scales each function's self times to its tottime, places the functions
 * left without a frame, and sums the totals again.  0, or -1 on out of
 * memory. */
static int settle(rebuild *r)
{
    sonde_time_tree *t = r->t;
    const sonde_stats *s = r->s;
    size_t nf = s->nfuncs ? s->nfuncs : 1;
    double *self_sum = calloc(nf, sizeof *self_sum), *total_sum = calloc(nf, sizeof *total_sum);
    uint32_t *biggest = calloc(nf, sizeof *biggest), *cstart = NULL, *corder = NULL;
    int rc = -1;
    if (!self_sum || !total_sum || !biggest || leftovers(t) < 0 ||
        sonde_stats_group_edges(s, 0, &cstart, &corder) < 0)
        goto out;
    uint32_t built = t->n;
    for (uint32_t i = 1; i < built; i++) {
        uint32_t f = (uint32_t)t->nodes[i].func;
        self_sum[f] += t->nodes[i].self;
        total_sum[f] += t->nodes[i].total;
        if (biggest[f] == 0 || t->nodes[i].total > t->nodes[biggest[f]].total)
            biggest[f] = i;
    }
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        double tt = s->funcs[f].present && s->funcs[f].tottime > 0 ? s->funcs[f].tottime : 0;
        if (!(tt > 0) || total_sum[f] > 0)
            continue;
        if (t->n >= SONDE_TIME_TREE_MAX_NODES) { /* kept in the root's own time */
            t->nodes[0].self += tt;
            t->cut = 1;
        } else if (sonde_time_tree_add(t, (int32_t)f, home_of(r, cstart, corder, biggest, f),
                                       0, tt) < 0) {
            goto out;
        }
    }
    for (uint32_t i = 1; i < built; i++) {
        sonde_time_node *nd = &t->nodes[i];
        const sonde_fstat *fs = &s->funcs[nd->func];
        double tt = fs->present && fs->tottime > 0 ? fs->tottime : 0;
        if (self_sum[nd->func] > 0)
            nd->self *= tt / self_sum[nd->func];
        else
            nd->self = total_sum[nd->func] > 0 ? tt * nd->total / total_sum[nd->func] : 0;
    }
    for (uint32_t i = 0; i < t->n; i++)
        t->nodes[i].total = t->nodes[i].self;
    for (uint32_t i = t->n - 1; i >= 1; i--) /* children come after their parents */
        t->nodes[t->nodes[i].parent].total += t->nodes[i].total;
    rc = 0;
out:
    free(self_sum);
    free(total_sum);
    free(biggest);
    free(cstart);
    free(corder);
    return rc;
}

/* ---- the whole rebuild ---- */

/* The roots as offers, biggest first.  Their count, or -1 on out of memory. */
static int64_t root_offers(rebuild *r, const double *roots)
{
    uint32_t n = 0;
    for (uint32_t f = 0; f < r->s->nfuncs; f++) {
        if (!(roots[f] > 0))
            continue;
        offer *o = sonde_grow(r->offers, &r->offers_cap, (size_t)n + 1, sizeof *o, UINT32_MAX);
        if (!o)
            return -1;
        r->offers = o;
        r->offers[n++] = (offer){ .callee = f, .value = roots[f] };
    }
    qsort(r->offers, n, sizeof *r->offers, by_value_down);
    return n;
}

int sonde_time_tree_from_stats(sonde_time_tree *t, const sonde_stats *s)
{
    memset(t, 0, sizeof *t);
    size_t nf = s->nfuncs ? s->nfuncs : 1;
    rebuild r = { .t = t, .s = s, .last_at = malloc(nf * sizeof *r.last_at),
                  .on_path = calloc(nf, sizeof *r.on_path),
                  .reached = calloc(nf, sizeof *r.reached) };
    uint32_t *start = NULL, *order = NULL, *component = NULL;
    uint8_t *cyclic = NULL;
    double *roots = sonde_stats_roots(s);
    int rc = -1;
    if (!roots || !r.last_at || !r.on_path || !r.reached ||
        sonde_stats_group_edges(s, 1, &start, &order) < 0 ||
        sonde_call_cycles(s, &component, &cyclic) < 0)
        goto out;
    r.start = start;
    r.order = order;
    r.component = component;
    r.cyclic = cyclic;
    double everything = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        everything += roots[f];
    if (sonde_time_tree_add(t, -1, 0, everything, 0) < 0)
        goto out;
    r.smallest = everything * 1e-6;
    int64_t n = root_offers(&r, roots);
    if (n < 0)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        if (add_rebuilt(&r, r.offers[i].callee, 0, r.offers[i].value, 1) < 0)
            goto out;
    while (r.nheap > 0 && t->n < SONDE_TIME_TREE_MAX_NODES)
        if (expand(&r, heap_pop(&r)) < 0)
            goto out;
    if (r.nheap > 0)
        t->cut = 1;
    /* fitting widths to cumtimes moves self times, and fitting self times to
     * tottimes moves widths: a few rounds bring both close, tottimes last */
    rc = 0;
    for (int round = 0; rc == 0 && round < FIT_ROUNDS; round++)
        rc = fit_cumtimes(&r) < 0 ? -1 : settle(&r);
out:
    free(start);
    free(order);
    free(component);
    free(cyclic);
    free(roots);
    free(r.heap);
    free(r.offers);
    free(r.last_at);
    free(r.on_path);
    free(r.reached);
    return rc;
}
