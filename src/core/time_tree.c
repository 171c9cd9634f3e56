/* time_tree.c - the call tree the pictures draw; see time_tree.h. */
#include "time_tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

void sonde_time_tree_free(sonde_time_tree *t)
{
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

static int add_node(sonde_time_tree *t, int32_t func, uint32_t parent, double total, double self)
{
    sonde_time_node *nodes = sonde_grow(t->nodes, &t->cap, (size_t)t->n + 1, sizeof *nodes,
                                        UINT32_MAX);
    if (!nodes)
        return -1;
    t->nodes = nodes;
    t->nodes[t->n++] = (sonde_time_node){
        .func = func, .parent = parent, .total = total, .self = self };
    return 0;
}

int sonde_time_tree_from_profile(sonde_time_tree *t, const sonde_profile *p)
{
    memset(t, 0, sizeof *t);
    sonde_node *nodes;
    uint32_t count;
    if (sonde_profile_merged_tree(p, 0, &nodes, &count) < 0)
        return -1;
    int rc = 0;
    for (uint32_t i = 1; rc == 0 && i < count; i++) {
        const sonde_node *n = &nodes[i];
        int32_t func = n->func == SONDE_NO_FUNC ? -1 : (int32_t)n->func;
        rc = add_node(t, i == 1 ? -1 : func, i == 1 ? 0 : n->parent - 1,
                      (double)n->total * p->seconds_per_tick,
                      (double)n->self * p->seconds_per_tick);
    }
    free(nodes);
    /* the root spans everything: every thread's time */
    double everything = 0;
    for (uint32_t i = 1; rc == 0 && i < t->n; i++)
        if (t->nodes[i].parent == 0)
            everything += t->nodes[i].total;
    if (rc == 0)
        t->nodes[0].total = everything;
    return rc;
}

/* ---- rebuilding from stats ----
 *
 * The roots are sonde_stats_roots'.  A node of function f worth `value`
 * seconds shares it among f's callees: callee c is offered cumtime(f->c)
 * scaled by value / cumtime(f), and the offers are served largest first
 * while room is left, so children never outgrow their parent.  A function
 * appears at most twice on a path: recursion through other functions is
 * followed once, since that is how programs run (builtins.exec runs a -m
 * program under runpy, and each imported module's body under the import
 * machinery).  Such a second appearance leads only to callees not on the
 * path yet, each offered its whole edge time (f's cumtime does not hold the
 * calls nested in f, so there is nothing to scale by), and the offers
 * whose time is closest to the node's are served first: of the module
 * bodies builtins.exec ran, the one this call ran is the one that took
 * about as long.  A function calling itself directly is one frame: its
 * recursion is in its own figures.  The biggest nodes are expanded first,
 * so the node cap drops the smallest branches. */

typedef struct pending {
    uint32_t node;
    uint32_t depth;
} pending;

typedef struct offer {
    uint32_t callee;
    double value;
    double order;   /* served in increasing order */
} offer;

typedef struct rebuild {
    sonde_time_tree *t;
    const sonde_stats *s;
    const uint32_t *start, *order;   /* edges grouped by caller */
    pending *heap;                   /* nodes to expand, biggest total on top */
    uint32_t nheap;
    size_t heap_cap;
    offer *offers;
    size_t offers_cap;
    double smallest;                 /* nodes worth less are left out */
} rebuild;

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

/* How often func appears from node up to the root, counting to `most`. */
static int appearances(const sonde_time_tree *t, uint32_t node, int32_t func, int most)
{
    int n = 0;
    for (uint32_t a = node; a != 0 && n < most; a = t->nodes[a].parent)
        n += t->nodes[a].func == func;
    return n;
}

static int by_order(const void *x, const void *y)
{
    const offer *a = x, *b = y;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return a->callee < b->callee ? -1 : a->callee > b->callee;
}

/* A node for function f worth value under parent, queued for expansion. */
static int add_rebuilt(rebuild *r, uint32_t f, uint32_t parent, double value, uint32_t depth)
{
    const sonde_fstat *fs = &r->s->funcs[f];
    double self = fs->tottime < fs->cumtime ? value * fs->tottime / fs->cumtime : value;
    if (add_node(r->t, (int32_t)f, parent, value, self) < 0)
        return -1;
    return depth < SONDE_TIME_TREE_MAX_DEPTH ? heap_push(r, r->t->n - 1, depth) : 0;
}

static int expand(rebuild *r, pending at)
{
    sonde_time_tree *t = r->t;
    uint32_t f = (uint32_t)t->nodes[at.node].func;
    double value = t->nodes[at.node].total, cum = r->s->funcs[f].cumtime;
    int again = appearances(t, t->nodes[at.node].parent, (int32_t)f, 1) > 0;
    double scale = again ? 1 : cum > 0 ? value / cum : 0;
    uint32_t n = 0;
    for (uint32_t k = r->start[f]; k < r->start[f + 1]; k++) {
        const sonde_edge *ed = &r->s->edges[r->order[k]];
        uint32_t c = ed->callee;
        double v = ed->cumtime * scale;
        if (c == f || !(v >= r->smallest) || !(r->s->funcs[c].cumtime > 0))
            continue;
        int on = appearances(t, at.node, (int32_t)c, 2);
        if (on == 2 || (on == 1 && again))
            continue;
        offer *o = sonde_grow(r->offers, &r->offers_cap, (size_t)n + 1, sizeof *o, UINT32_MAX);
        if (!o)
            return -1;
        r->offers = o;
        r->offers[n++] = (offer){
            .callee = c, .value = v, .order = again ? fabs(log(v / value)) : -v };
    }
    qsort(r->offers, n, sizeof *r->offers, by_order);
    double room = value;
    for (uint32_t i = 0; i < n && t->n < SONDE_TIME_TREE_MAX_NODES; i++) {
        double v = r->offers[i].value < room ? r->offers[i].value : room;
        if (!(v >= r->smallest))
            break;
        room -= v;
        if (add_rebuilt(r, r->offers[i].callee, at.node, v, at.depth + 1) < 0)
            return -1;
    }
    return 0;
}

int sonde_time_tree_from_stats(sonde_time_tree *t, const sonde_stats *s)
{
    memset(t, 0, sizeof *t);
    rebuild r = { .t = t, .s = s };
    uint32_t *start = NULL, *order = NULL;
    double *roots = sonde_stats_roots(s);
    int rc = -1;
    if (!roots || sonde_stats_group_edges(s, 1, &start, &order) < 0)
        goto out;
    r.start = start;
    r.order = order;
    double everything = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        everything += roots[f];
    if (add_node(t, -1, 0, everything, 0) < 0)
        goto out;
    r.smallest = everything * 1e-6;
    /* the biggest roots first, so that the node cap drops the smallest */
    uint32_t n = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        n += roots[f] > 0;
    r.offers = malloc((n ? n : 1) * sizeof *r.offers);
    if (!r.offers)
        goto out;
    r.offers_cap = n;
    n = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        if (roots[f] > 0)
            r.offers[n++] = (offer){ .callee = f, .value = roots[f], .order = -roots[f] };
    qsort(r.offers, n, sizeof *r.offers, by_order);
    for (uint32_t i = 0; i < n && t->n < SONDE_TIME_TREE_MAX_NODES; i++)
        if (add_rebuilt(&r, r.offers[i].callee, 0, r.offers[i].value, 1) < 0)
            goto out;
    while (r.nheap > 0 && t->n < SONDE_TIME_TREE_MAX_NODES)
        if (expand(&r, heap_pop(&r)) < 0)
            goto out;
    rc = 0;
out:
    free(start);
    free(order);
    free(roots);
    free(r.heap);
    free(r.offers);
    return rc;
}
