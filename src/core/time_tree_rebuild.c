/* time_tree_rebuild.c - the call tree rebuilt from a .prof file's stats.
 *
 * A .prof holds, per function, its calls, tottime and cumtime, and per
 * caller->callee edge the same figures: no call paths.  The tree is
 * expanded from the roots of the call graph (sonde_stats_roots), biggest
 * node first, so that the node bound drops the smallest branches.
 *
 * A dispatcher is a function on a call cycle (call_cycles.h) that is
 * entered again while it runs (pluggy's hook call, an AST visitor): it is
 * recursive (ncalls > pcalls), or its callee edges add up to more than its
 * cumtime, since they hold the time of every nesting level.
 *
 * A node of function f worth v seconds offers each callee c a share of
 * itself, cumtime(f->c) scaled by v / cumtime(f), and the offers are
 * served in an order (below) while room is left, so children never outgrow
 * their parent.  A function of no recursion (ncalls == pcalls) is never
 * placed under a frame of itself, and a path never ends in the same cycle
 * twice over (a b a b, then a), which bounds it with the depth and node
 * caps.
 *   - Under a function that is no dispatcher, the offers are served
 *     biggest first; when no cycle leads back to f they fit in v.
 *   - Under a dispatcher, each edge has a budget, its cumtime, that the
 *     frames of its outermost calls spend, and an offer is at most what is
 *     left of it.  The callees are served one at a time, each time the one
 *     whose offer is closest to the room left: the plugin this call ran
 *     took about as long as the call, and the plugins nested in it (the
 *     test body under pytest's runtestloop) are left for the nested
 *     frames.  At a frame of f nested in another frame of f, the callees
 *     the path has not yet reached from f are served first.
 *   - An edge of a dispatcher with one call left (each module's exec under
 *     the import machinery) is not shared by ratio: once everything else
 *     is expanded, these are placed one by one, whole, biggest first, each
 *     in the frame of its caller with the smallest room left that fits it
 *     (else the biggest), and what they call is expanded before the next.
 *     The room no such call took is taken off its frame and those above.
 *
 * Then the widths are fitted: every function that is no dispatcher has,
 * over all its frames, its cumtime (each one's frames, with what is under
 * them, are scaled to it, callers first).  And every function is given its
 * tottime: each node's self time is what its children leave of it, and a
 * function's self times are scaled to add up to its tottime (a function
 * left with no frame gets one under its biggest caller's, or, past the
 * node bound, stays in the root's own time); totals are summed again from
 * the leaves.  Each moves the other's figures, so the two alternate for up
 * to SETTLE_ROUNDS rounds, within a bound on their work, ending on
 * tottimes.  So the root is the profile's total time, no function's own
 * time is lost, and the frames of a function are close to its cumtime.
 * A .prof holds no call paths: callees of one call of about the same cost
 * (imports of look-alike modules) can swap places, and the tree cannot
 * tell them apart. */
#include "time_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "call_cycles.h"
#include "grow.h"

/* Callees served by closeness to the room left, at most, per group. */
#define MAX_PICKS 64
/* Fitting widths to cumtimes first, FIT_ROUNDS times, then giving self
 * times their tottimes; then SETTLE_ROUNDS - 1 more rounds of both.  Each
 * fitting walks every node's ancestors (nodes x depth): the rounds stop
 * once FIT_WORK such steps are spent, and the tree still ends settled. */
#define FIT_ROUNDS 4
#define SETTLE_ROUNDS 16
#define FIT_WORK (256ull * SONDE_TIME_TREE_MAX_NODES)

typedef struct pending {
    uint32_t node;
    uint32_t depth;
} pending;

typedef struct offer {
    uint32_t callee;
    double value;
    uint32_t edge;    /* its edge's index in the stats */
    int group;        /* served in increasing group */
    int budgeted;     /* an outermost call of f->callee: spends the edge's budget */
    int whole;        /* the edge's one call left, offered whole */
    int taken;
} offer;

/* A dispatcher's frame with room left for its callees of one call. */
typedef struct slot {
    uint32_t node, depth;
    uint32_t next;    /* the next slot of the same function, or UINT32_MAX */
    double room;
} slot;

typedef struct rebuild {
    sonde_time_tree *t;
    const sonde_stats *s;
    const uint32_t *start, *order;   /* edges grouped by caller */
    const uint32_t *component;       /* call_cycles.h */
    const uint8_t *cyclic;
    uint8_t *dispatcher;             /* per function: entered again (below) */
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
    double *edge_left;               /* per edge: its time not yet placed */
    uint64_t *calls_left;            /* per edge: its calls not yet placed, or
                                        UINT64_MAX when the stats give none */
    slot *slots;
    uint32_t nslots;
    size_t slots_cap;
    uint32_t *first_slot;            /* per function: its latest slot */
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
    r->heap[i] = (pending){ .node = node, .depth = depth};
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
    double scale = cum > 0 ? value / cum : 0;
    uint32_t n = 0;
    for (uint32_t k = r->start[f]; k < r->start[f + 1]; k++) {
        const sonde_edge *ed = &s->edges[r->order[k]];
        uint32_t c = ed->callee;
        double v = ed->cumtime * scale;
        int group = nested && r->reached[c] == r->stamp;
        int budgeted = r->dispatcher[f] && !group, whole = 0;
        if (r->on_path[c] == r->stamp && s->funcs[c].ncalls <= s->funcs[c].pcalls)
            continue;
        if (budgeted) {
            if (r->calls_left[r->order[k]] == 0)
                continue;
            whole = r->calls_left[r->order[k]] == 1;
            if (whole || v > r->edge_left[r->order[k]])
                v = r->edge_left[r->order[k]];
        }
        if (c == f || !(v >= r->smallest) || !(s->funcs[c].cumtime > 0) ||
            repeats_cycle(r, depth, c))
            continue;
        offer *o = sonde_grow(r->offers, &r->offers_cap, (size_t)n + 1, sizeof *o, UINT32_MAX);
        if (!o)
            return -1;
        r->offers = o;
        r->offers[n++] = (offer){ .callee = c, .value = v, .edge = r->order[k], .group = group,
                                  .budgeted = budgeted, .whole = whole };
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
        if (!o->taken && !o->whole && o->group == g && gap < best_gap)
            best_gap = gap;
    }
    uint32_t best = n;
    for (uint32_t i = 0; i < n; i++) {
        const offer *o = &r->offers[i];
        if (!o->taken && !o->whole && o->group == g &&
            fabs(log(o->value / room)) <= best_gap + NEAR &&
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
    if (r->offers[i].budgeted)
        r->edge_left[r->offers[i].edge] -= v;
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
    if (!r->dispatcher[f]) {
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
    int whole = 0;
    for (uint32_t i = 0; i < n; i++)
        whole |= r->offers[i].whole;
    if (!whole || !(room >= r->smallest))
        return 0;
    slot *sl = sonde_grow(r->slots, &r->slots_cap, (size_t)r->nslots + 1, sizeof *sl, UINT32_MAX);
    if (!sl)
        return -1;
    r->slots = sl;
    r->slots[r->nslots] = (slot){ .node = at.node, .depth = at.depth, .next = r->first_slot[f],
                                  .room = room };
    r->first_slot[f] = r->nslots++;
    return 0;
}

/* ---- placing the callees of one call ---- */

/* Path steps read looking at slots, for all placements together, past
 * which the slots are no longer looked at and the callees of one call left
 * are not placed (a bound on hostile files' cost). */
#define SLOT_WORK 20000000u

typedef struct ranked {
    double value;
    uint32_t edge;
} ranked;

static int by_rank_down(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return a->edge < b->edge ? -1 : a->edge > b->edge;
}

/* Whether c may go under slot sl: not the cycle ending there again, not a
 * function of no recursion already on the path. */
static int may_go(rebuild *r, const slot *sl, uint32_t c)
{
    read_path(r, sl->node, sl->depth);
    return !repeats_cycle(r, sl->depth, c) &&
           !(r->on_path[c] == r->stamp && r->s->funcs[c].ncalls <= r->s->funcs[c].pcalls);
}

/* Places edge e (its one call, whole) in the slot of its caller that fits
 * it best: the smallest room it fits in, else the biggest room.  *work
 * counts the path steps read for it (each slot looked at reads its path).
 * 0, or -1 on out of memory. */
static int place_whole(rebuild *r, uint32_t e, uint64_t *work)
{
    const sonde_edge *ed = &r->s->edges[e];
    double v = r->edge_left[e];
    uint32_t best = UINT32_MAX;
    for (uint32_t k = r->first_slot[ed->caller]; k != UINT32_MAX; k = r->slots[k].next) {
        const slot *sl = &r->slots[k];
        if (*work > SLOT_WORK)
            break;
        *work += (uint64_t)sl->depth + 1;
        if (!(sl->room >= r->smallest) || !may_go(r, sl, ed->callee))
            continue;
        if (best == UINT32_MAX ||
            (sl->room >= v ? r->slots[best].room < v || sl->room < r->slots[best].room
                           : r->slots[best].room < v && sl->room > r->slots[best].room))
            best = k;
    }
    if (best == UINT32_MAX)
        return 0;
    slot *sl = &r->slots[best];
    if (v > sl->room)
        v = sl->room;
    sl->room -= v;
    r->edge_left[e] -= v;
    r->calls_left[e] = 0;
    return add_rebuilt(r, ed->callee, sl->node, v, sl->depth + 1);
}

/* ---- widening each function to its cumtime ---- */

/* The product of the factors of node's ancestors' functions (node's own
 * left out). */
static double above(const sonde_time_tree *t, const double *factor, uint32_t node,
                    uint64_t *work)
{
    double x = 1;
    for (uint32_t a = t->nodes[node].parent; a != 0; a = t->nodes[a].parent) {
        x *= factor[t->nodes[a].func];
        ++*work;
    }
    return x;
}

/* Shares taken by ratio lose or gain a little at each level (a node shares
 * its function's callees in the proportions of all its calls), and less
 * above a dispatcher, whose edges hold every nesting level.  A function no
 * cycle leads back to has, over all its frames, exactly its cumtime: each
 * such function's frames, with what is under them, are scaled to it,
 * callers before callees (Tarjan numbers callees' components first), so a
 * callee is fitted within frames already fitted.  *work counts the
 * ancestors walked.  0, or -1 on out of memory. */
static int fit_cumtimes(rebuild *r, uint64_t *work)
{
    sonde_time_tree *t = r->t;
    const sonde_stats *s = r->s;
    size_t nf = s->nfuncs ? s->nfuncs : 1;
    double *factor = malloc(nf * sizeof *factor);
    uint32_t *start = calloc(nf + 2, sizeof *start), *by_func = malloc(t->n * sizeof *by_func);
    uint32_t *first = malloc(nf * sizeof *first), *members = malloc(nf * sizeof *members);
    int rc = -1;
    if (!factor || !start || !by_func || !first || !members)
        goto out;
    /* nodes grouped by function (a counting sort); functions in the order
     * their first frame was made (parents are made before their children) */
    for (uint32_t f = 0; f < s->nfuncs; f++)
        first[f] = UINT32_MAX;
    for (uint32_t i = 1; i < t->n; i++) {
        uint32_t f = (uint32_t)t->nodes[i].func;
        start[f + 2]++;
        if (first[f] == UINT32_MAX)
            first[f] = i;
    }
    uint32_t nm = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (first[t->nodes[i].func] == i)
            members[nm++] = (uint32_t)t->nodes[i].func;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        factor[f] = 1;
        start[f + 2] += start[f + 1];
    }
    for (uint32_t i = 1; i < t->n; i++)
        by_func[start[t->nodes[i].func + 1]++] = i;
    for (uint32_t k = 0; k < nm; k++) {
        uint32_t f = members[k];
        double cum = s->funcs[f].cumtime, drawn = 0;
        if (r->dispatcher[f] || !(cum > 0))
            continue;
        for (uint32_t j = start[f]; j < start[f + 1]; j++)
            drawn += t->nodes[by_func[j]].total * above(t, factor, by_func[j], work);
        if (drawn > 0)
            factor[f] = cum / drawn;
    }
    for (uint32_t i = 1; i < t->n; i++)
        t->nodes[i].total *= above(t, factor, i, work) * factor[t->nodes[i].func];
    rc = 0;
out:
    free(factor);
    free(start);
    free(by_func);
    free(first);
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
    if (n > 1) /* qsort takes no NULL array, even empty */
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
    size_t ne = s->nedges ? s->nedges : 1;
    r.edge_left = malloc(ne * sizeof *r.edge_left);
    r.calls_left = malloc(ne * sizeof *r.calls_left);
    if (!r.edge_left || !r.calls_left)
        goto out;
    for (uint32_t e = 0; e < s->nedges; e++) {
        const sonde_edge *ed = &s->edges[e];
        uint64_t calls = ed->pcalls > 0 && ed->pcalls <= ed->ncalls ? ed->pcalls : ed->ncalls;
        r.edge_left[e] = ed->cumtime;
        r.calls_left[e] = calls > 0 ? calls : UINT64_MAX;
    }
    r.dispatcher = calloc(nf, 1);
    r.first_slot = malloc(nf * sizeof *r.first_slot);
    if (!r.dispatcher || !r.first_slot)
        goto out;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        r.first_slot[f] = UINT32_MAX;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        double out_edges = 0;
        for (uint32_t k = start[f]; k < start[f + 1]; k++)
            if (s->edges[order[k]].callee != f)
                out_edges += s->edges[order[k]].cumtime;
        r.dispatcher[f] = cyclic[f] && (fs->ncalls > fs->pcalls ||
                                        out_edges > fs->cumtime * (1 + 1e-3) + 1e-6);
    }
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
    /* the callees of one call, biggest first, each in its caller's slot
     * that fits it best, and what they call expanded before the next */
    ranked *whole = malloc(ne * sizeof *whole);
    uint32_t nwhole = 0;
    if (!whole)
        goto out;
    for (uint32_t e = 0; e < s->nedges; e++)
        if (r.dispatcher[s->edges[e].caller] && r.calls_left[e] == 1 &&
            s->edges[e].callee != s->edges[e].caller && r.edge_left[e] >= r.smallest)
            whole[nwhole++] = (ranked){ .value = r.edge_left[e], .edge = e };
    qsort(whole, nwhole, sizeof *whole, by_rank_down);
    uint64_t work = 0;
    for (uint32_t k = 0; k < nwhole && t->n < SONDE_TIME_TREE_MAX_NODES; k++) {
        if (r.calls_left[whole[k].edge] != 1)
            continue;
        if (place_whole(&r, whole[k].edge, &work) < 0) {
            free(whole);
            goto out;
        }
        while (r.nheap > 0 && t->n < SONDE_TIME_TREE_MAX_NODES)
            if (expand(&r, heap_pop(&r)) < 0) {
                free(whole);
                goto out;
            }
    }
    free(whole);
    if (r.nheap > 0)
        t->cut = 1;
    /* the room no callee of one call took was never spent there: taken
     * off the slot's frame and those above it (fitting widens them again
     * in the proportions of what they hold) */
    for (uint32_t k = 0; k < r.nslots; k++) {
        const sonde_time_node *nd = &t->nodes[r.slots[k].node];
        const sonde_fstat *fs = &s->funcs[nd->func];
        double own = fs->cumtime > 0 && fs->tottime > 0 ? nd->total * fs->tottime / fs->cumtime : 0;
        double unspent = r.slots[k].room - own;
        if (unspent > 0)
            for (uint32_t a = r.slots[k].node; a != 0; a = t->nodes[a].parent)
                t->nodes[a].total -= unspent;
    }
    /* fitting widths to cumtimes moves self times, and fitting self times to
     * tottimes moves widths: rounds of both (up to SETTLE_ROUNDS, within
     * FIT_WORK) bring both close, tottimes last */
    rc = 0;
    uint64_t fit_work = 0;
    for (int round = 0; rc == 0 && round < FIT_ROUNDS && (round == 0 || fit_work < FIT_WORK);
         round++)
        rc = fit_cumtimes(&r, &fit_work);
    if (rc == 0)
        rc = settle(&r);
    for (int round = 1; rc == 0 && round < SETTLE_ROUNDS && fit_work < FIT_WORK; round++)
        rc = fit_cumtimes(&r, &fit_work) < 0 ? -1 : settle(&r);
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
    free(r.edge_left);
    free(r.dispatcher);
    free(r.first_slot);
    free(r.slots);
    free(r.calls_left);
    return rc;
}
