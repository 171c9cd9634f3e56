/* view_tree.h - the call tree the pictures draw: from a profile's
 * calling-context tree (exact), or rebuilt from a .prof file's callers, as
 * snakeviz does: from the roots of the call graph (sonde_stats_roots),
 * each function's callees share its time in the proportions its callee
 * edges give (view_tree.c says how recursion and nesting are handled). */
#ifndef SONDE_VIEW_TREE_H
#define SONDE_VIEW_TREE_H

#include <stdint.h>

#include "buf.h"
#include "profile.h"
#include "stats.h"

/* Rebuilt trees stop at this many nodes (the smallest branches go first)
 * and this deep. */
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
 * across two profiles; object addresses (" at 0x7f...") are left out, since
 * they differ from run to run. */
void view_func_label(sonde_buf *b, const sonde_profile *p, uint32_t func);

#endif
