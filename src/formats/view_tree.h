/* view_tree.h - the call tree the pictures draw: from a profile's
 * calling-context tree (exact), or rebuilt from a .prof file's callers as
 * snakeviz does (each function's callees share its time in the
 * proportions its callee edges give; recursion is cut where a function
 * would appear inside itself). */
#ifndef SONDE_VIEW_TREE_H
#define SONDE_VIEW_TREE_H

#include <stdint.h>

#include "../core/profile.h"
#include "../core/stats.h"

/* Rebuilt trees stop at this many nodes (the smallest branches go first). */
#define VIEW_MAX_NODES 200000u
#define VIEW_MAX_DEPTH 128

typedef struct view_node {
    int32_t func;        /* function id; -1 for the root */
    uint32_t parent;     /* node 0 is the root; parents come first */
    double total, self;  /* seconds */
} view_node;

typedef struct view_tree {
    view_node *nodes;
    uint32_t n, cap;
} view_tree;

void view_tree_free(view_tree *t);

/* 0, or -1 on out of memory.  The root's total is everything's. */
int view_tree_from_profile(view_tree *t, const sonde_profile *p);
int view_tree_from_stats(view_tree *t, const sonde_stats *s);

/* "file:line(name)": a function's label, the key that matches functions
 * across two profiles. */
void view_func_label(const sonde_profile *p, uint32_t func, char *out, size_t len);

#endif
