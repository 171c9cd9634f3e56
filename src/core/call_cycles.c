/* call_cycles.c - which functions call each other back; see call_cycles.h.
 *
 * Tarjan's algorithm with an explicit stack of (function, next edge): each
 * function is entered once and each edge followed once, so the cost is
 * O(functions + edges) whatever the file says. */
#include "call_cycles.h"

#include <stdlib.h>

#define UNSEEN UINT32_MAX

typedef struct tarjan {
    const sonde_stats *s;
    const uint32_t *start, *order;   /* edges grouped by caller */
    uint32_t *index, *low;           /* visit number; lowest reachable on the stack */
    uint8_t *on_stack;
    uint32_t *stack, nstack;         /* functions of open components */
    uint32_t *walk, *next_edge, nwalk;   /* the depth-first path */
    uint32_t *component;
    uint8_t *cyclic;
    uint32_t visits, components;
} tarjan;

static void enter(tarjan *t, uint32_t f)
{
    t->index[f] = t->low[f] = t->visits++;
    t->stack[t->nstack++] = f;
    t->on_stack[f] = 1;
    t->walk[t->nwalk] = f;
    t->next_edge[t->nwalk++] = t->start[f];
}

/* Closes the component rooted at f: everything above it on the stack. */
static void close_component(tarjan *t, uint32_t f)
{
    uint32_t first = t->nstack;
    do
        first--;
    while (t->stack[first] != f);
    uint8_t cyclic = t->nstack - first > 1;
    for (uint32_t i = first; i < t->nstack; i++) {
        uint32_t g = t->stack[i];
        t->on_stack[g] = 0;
        t->component[g] = t->components;
    }
    for (uint32_t i = first; i < t->nstack; i++)
        t->cyclic[t->stack[i]] = cyclic;
    t->nstack = first;
    t->components++;
}

static void walk_from(tarjan *t, uint32_t root)
{
    enter(t, root);
    while (t->nwalk > 0) {
        uint32_t f = t->walk[t->nwalk - 1];
        if (t->next_edge[t->nwalk - 1] < t->start[f + 1]) {
            const sonde_edge *e = &t->s->edges[t->order[t->next_edge[t->nwalk - 1]++]];
            uint32_t c = e->callee;
            if (t->index[c] == UNSEEN)
                enter(t, c);
            else if (t->on_stack[c] && t->index[c] < t->low[f])
                t->low[f] = t->index[c];
            continue;
        }
        if (t->low[f] == t->index[f])
            close_component(t, f);
        t->nwalk--;
        if (t->nwalk > 0) {
            uint32_t up = t->walk[t->nwalk - 1];
            if (t->low[f] < t->low[up])
                t->low[up] = t->low[f];
        }
    }
}

int sonde_call_cycles(const sonde_stats *s, uint32_t **component_out, uint8_t **cyclic_out)
{
    size_t n = s->nfuncs ? s->nfuncs : 1;
    tarjan t = { .s = s,
                 .index = malloc(n * sizeof *t.index), .low = malloc(n * sizeof *t.low),
                 .on_stack = calloc(n, 1), .stack = malloc(n * sizeof *t.stack),
                 .walk = malloc(n * sizeof *t.walk), .next_edge = malloc(n * sizeof *t.next_edge),
                 .component = malloc(n * sizeof *t.component), .cyclic = calloc(n, 1) };
    uint32_t *start = NULL, *order = NULL;
    int ok = t.index && t.low && t.on_stack && t.stack && t.walk && t.next_edge &&
             t.component && t.cyclic && sonde_stats_group_edges(s, 1, &start, &order) == 0;
    if (ok) {
        t.start = start;
        t.order = order;
        for (uint32_t f = 0; f < s->nfuncs; f++)
            t.index[f] = UNSEEN;
        for (uint32_t f = 0; f < s->nfuncs; f++)
            if (t.index[f] == UNSEEN)
                walk_from(&t, f);
        for (uint32_t e = 0; e < s->nedges; e++) /* a function calling itself */
            if (s->edges[e].caller == s->edges[e].callee)
                t.cyclic[s->edges[e].caller] = 1;
    }
    free(t.index);
    free(t.low);
    free(t.on_stack);
    free(t.stack);
    free(t.walk);
    free(t.next_edge);
    free(start);
    free(order);
    if (!ok) {
        free(t.component);
        free(t.cyclic);
        return -1;
    }
    *component_out = t.component;
    *cyclic_out = t.cyclic;
    return 0;
}
