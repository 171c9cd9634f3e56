/* time_tree.c - the call tree the pictures draw; see time_tree.h. */
#include "time_tree.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

void sonde_time_tree_free(sonde_time_tree *t)
{
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

int sonde_time_tree_add(sonde_time_tree *t, int32_t func, uint32_t parent, double total,
                        double self)
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
        rc = sonde_time_tree_add(t, i == 1 ? -1 : func, i == 1 ? 0 : n->parent - 1,
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
