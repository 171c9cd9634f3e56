/* view_tree.c - the call tree the pictures draw; see view_tree.h. */
#include "view_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void view_tree_free(view_tree *t)
{
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

static int add_node(view_tree *t, int32_t func, uint32_t parent, double total, double self)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        view_node *nodes = realloc(t->nodes, cap * sizeof *nodes);
        if (!nodes)
            return -1;
        t->nodes = nodes;
        t->cap = cap;
    }
    t->nodes[t->n++] = (view_node){ func, parent, total, self };
    return 0;
}

int view_tree_from_profile(view_tree *t, const sonde_profile *p)
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

/* Rebuilding from stats: a node of function f worth `value` seconds gives
 * each callee c the share value * cumtime(f->c) / cumtime(f). */
typedef struct pending {
    uint32_t node;
    uint32_t depth;
} pending;

static int on_path(const view_tree *t, uint32_t node, int32_t func)
{
    for (uint32_t a = node;; a = t->nodes[a].parent) {
        if (t->nodes[a].func == func)
            return 1;
        if (a == 0)
            return 0;
    }
}

int view_tree_from_stats(view_tree *t, const sonde_stats *s)
{
    memset(t, 0, sizeof *t);
    uint32_t *start = NULL, *order = NULL;
    pending *stack = malloc(VIEW_MAX_NODES * sizeof *stack);
    uint8_t *called = sonde_stats_called(s);
    int rc = -1;
    if (!stack || !called || sonde_stats_group_edges(s, 1, &start, &order) < 0)
        goto out;
    double everything = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++)
        if (s->funcs[f].present && !called[f])
            everything += s->funcs[f].cumtime;
    if (add_node(t, -1, 0, everything, 0) < 0)
        goto out;
    uint32_t top = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (!fs->present || called[f] || fs->cumtime <= 0)
            continue;
        if (add_node(t, (int32_t)f, 0, fs->cumtime, fs->tottime) < 0)
            goto out;
        stack[top++] = (pending){ t->n - 1, 1 };
    }
    double smallest = everything * 1e-6;
    while (top > 0 && t->n < VIEW_MAX_NODES) {
        pending at = stack[--top];
        int32_t f = t->nodes[at.node].func;
        double scale = t->nodes[at.node].total / s->funcs[f].cumtime;
        if (at.depth >= VIEW_MAX_DEPTH)
            continue;
        for (uint32_t k = start[f]; k < start[f + 1] && t->n < VIEW_MAX_NODES; k++) {
            const sonde_edge *ed = &s->edges[order[k]];
            const sonde_fstat *cs = &s->funcs[ed->callee];
            double value = ed->cumtime * scale;
            if (value < smallest || cs->cumtime <= 0 || on_path(t, at.node, (int32_t)ed->callee))
                continue;
            double self = value * (cs->tottime < cs->cumtime ? cs->tottime / cs->cumtime : 1);
            if (add_node(t, (int32_t)ed->callee, at.node, value, self) < 0)
                goto out;
            if (top < VIEW_MAX_NODES)
                stack[top++] = (pending){ t->n - 1, at.depth + 1 };
        }
    }
    rc = 0;
out:
    free(start);
    free(order);
    free(stack);
    free(called);
    return rc;
}

void view_func_label(const sonde_profile *p, uint32_t func, char *out, size_t len)
{
    const sonde_func *f = &p->funcs[func];
    snprintf(out, len, "%s:%d(%s)", sonde_profile_str(p, f->file), f->line,
             sonde_profile_str(p, f->name));
}
