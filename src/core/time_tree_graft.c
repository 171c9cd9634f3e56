/* time_tree_graft.c - a rebuilt call tree made a profile's own; see
 * time_tree_graft.h. */
#include "time_tree_graft.h"

#include <stdlib.h>

#include "time_tree.h"

/* seconds as nanosecond ticks, rounded; 0 for what is not positive. */
static uint64_t ticks_of(double seconds)
{
    double v = seconds * 1e9 + 0.5;
    if (!(v >= 1))
        return 0;
    return v < 18446744073709551616.0 ? (uint64_t)v : UINT64_MAX;
}

int sonde_time_tree_graft(sonde_profile *p, const sonde_stats *s, int *cut)
{
    sonde_time_tree t;
    if (sonde_time_tree_from_stats(&t, s) < 0) {
        sonde_time_tree_free(&t);
        return -1;
    }
    if (cut)
        *cut = t.cut;
    uint32_t *node_of = malloc((t.n ? t.n : 1) * sizeof *node_of);
    int64_t thread = node_of ? sonde_profile_add_thread(p, 1, 0, "rebuilt from the callers") : -1;
    int rc = thread < 0 ? -1 : 0;
    p->seconds_per_tick = 1e-9;
    if (rc == 0)
        node_of[0] = p->threads[thread].root;
    for (uint32_t i = 1; rc == 0 && i < t.n; i++) {
        const sonde_time_node *n = &t.nodes[i];
        uint32_t node = sonde_profile_child_for(p, node_of[n->parent], (uint32_t)n->func, 0);
        if (node == SONDE_NO_NODE) {
            rc = -1;
            break;
        }
        node_of[i] = node;
        p->nodes[node].total += ticks_of(n->total);
        p->nodes[node].self += ticks_of(n->self);
    }
    if (rc == 0)
        p->nodes[node_of[0]].total = ticks_of(t.nodes[0].total);
    free(node_of);
    sonde_time_tree_free(&t);
    return rc;
}
