/* ops.c - operators placed into a calling-context tree; see ops.h. */
#include "ops.h"

#include <stdlib.h>

#include "grow.h"

/* An open interval on a sweep's stack: when it ends, and its node. */
typedef struct open_item {
    uint64_t end;
    uint32_t node;
} open_item;

typedef struct open_stack {
    open_item *items;
    size_t n, cap;
} open_stack;

/* Earlier start first; of two starting together, the longer (outer) one. */
static int by_start_span(const void *a, const void *b)
{
    const sonde_span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

static int by_start_op(const void *a, const void *b)
{
    const sonde_op *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

static int push(open_stack *s, uint64_t end, uint32_t node)
{
    open_item *items = sonde_grow(s->items, &s->cap, s->n + 1, sizeof *items, SIZE_MAX);
    if (!items)
        return -1;
    s->items = items;
    s->items[s->n++] = (open_item){ end, node };
    return 0;
}

/* Pops what ended at or before t. */
static void pop_ended(open_stack *s, uint64_t t)
{
    while (s->n && s->items[s->n - 1].end <= t)
        s->n--;
}

/* op's node under parent, its figures added and its time taken from the
 * parent's self time.  SONDE_NO_NODE on out of memory. */
static uint32_t add_op(sonde_profile *p, uint32_t parent, const sonde_op *op)
{
    uint32_t node = sonde_profile_child_for(p, parent, op->func, 0);
    if (node == SONDE_NO_NODE)
        return node;
    uint64_t d = op->end > op->start ? op->end - op->start : 0;
    sonde_node *n = &p->nodes[node];
    n->calls++;
    n->total += d;
    n->self += d;
    sonde_node *up = &p->nodes[parent];
    up->self -= d < up->self ? d : up->self;
    return node;
}

/* Per sorted operator: the operator it runs in (NONE: top-level), how
 * many run directly in it, and its node (or the node a top-level one
 * goes under, until it has its own). */
#define NONE SIZE_MAX
typedef struct op_place {
    size_t parent;
    size_t nkids;
    uint32_t node;
    size_t counted;      /* the counted operator its time is part of: itself,
                          * or for one not counted its parent's */
} op_place;

/* Nests the sorted ops as torch.profiler does; a top-level one's node is
 * the innermost span open at its start (else root).  0, or -1. */
static int nest(sonde_span *spans, size_t nspans, const sonde_op *ops, size_t nops,
                uint32_t root, op_place *at, size_t *top, size_t *placed)
{
    open_stack calls = { 0 }, running = { 0 };
    size_t next = 0;
    int rc = 0;
    for (size_t i = 0; i < nops && rc == 0; i++) {
        pop_ended(&running, ops[i].start);
        at[i] = (op_place){ .parent = NONE, .node = root };
        if (running.n) {
            at[i].parent = running.items[running.n - 1].node; /* an index here */
            at[at[i].parent].nkids++;
        } else {
            for (; next < nspans && spans[next].start <= ops[i].start && rc == 0; next++) {
                pop_ended(&calls, spans[next].start);
                rc = push(&calls, spans[next].end, spans[next].node);
            }
            /* A call that ends exactly as the operator starts held it
             * only on a coarse clock: keep it. */
            while (calls.n && calls.items[calls.n - 1].end < ops[i].start)
                calls.n--;
            if (calls.n)
                at[i].node = calls.items[calls.n - 1].node;
            *top += 1;
            *placed += calls.n > 0;
        }
        if (rc == 0)
            rc = push(&running, ops[i].end, (uint32_t)i);
    }
    free(calls.items);
    free(running.items);
    return rc;
}

int sonde_ops_place(sonde_profile *p, uint32_t root, sonde_span *spans, size_t nspans,
                    sonde_op *ops, size_t nops, size_t *top, size_t *placed)
{
    if (nops >= UINT32_MAX)
        return -1;
    qsort(spans, nspans, sizeof *spans, by_start_span);
    qsort(ops, nops, sizeof *ops, by_start_op);
    op_place *at = malloc((nops + 1) * sizeof *at);
    int rc = at ? nest(spans, nspans, ops, nops, root, at, top, placed) : -1;
    for (size_t i = 0; i < nops && rc == 0; i++) {
        size_t up = at[i].parent;
        /* torch.profiler's _remove_dup_nodes: an operator that is the only
         * one in an operator of its own name (a dispatch re-entering
         * itself) is not counted; what ran in it runs in its parent. */
        if (up != NONE && ops[up].same == ops[i].same && at[up].nkids == 1) {
            at[up].nkids = at[i].nkids;
            at[i].node = at[up].node;
            at[i].counted = at[up].counted;
            ops[i].node = SONDE_NO_NODE;
            ops[i].home = at[i].node;
            continue;
        }
        at[i].node = add_op(p, up != NONE ? at[up].node : at[i].node, &ops[i]);
        ops[i].node = ops[i].home = at[i].node;
        at[i].counted = i;
        ops[i].self = ops[i].end > ops[i].start ? ops[i].end - ops[i].start : 0;
        if (up != NONE) {
            sonde_op *holder = &ops[at[up].counted];
            holder->self -= ops[i].self < holder->self ? ops[i].self : holder->self;
        }
        if (at[i].node == SONDE_NO_NODE)
            rc = -1;
    }
    free(at);
    return rc;
}
