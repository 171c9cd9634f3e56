/* time_tree.h - the call tree the pictures draw: from a profile's
 * calling-context tree (exact), or rebuilt from a .prof file's callers, as
 * snakeviz does: from the roots of the call graph (sonde_stats_roots),
 * each function's callees share its time in the proportions its callee
 * edges give (time_tree_rebuild.c says how recursion and dispatchers that
 * are entered again are handled). */
#ifndef SONDE_TIME_TREE_H
#define SONDE_TIME_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "stats.h"

/* Rebuilt trees stop at this many nodes (the smallest branches go first)
 * and this deep. */
#define SONDE_TIME_TREE_MAX_NODES 200000u
#define SONDE_TIME_TREE_MAX_DEPTH 128

typedef struct sonde_time_node {
    int32_t func;        /* function id; -1 for the root */
    uint32_t parent;     /* node 0 is the root; parents come first */
    double total, self;  /* seconds */
} sonde_time_node;

typedef struct sonde_time_tree {
    sonde_time_node *nodes;
    uint32_t n;
    size_t cap;
    int cut;             /* rebuilt: the node or depth bound left branches out */
} sonde_time_tree;

void sonde_time_tree_free(sonde_time_tree *t);

/* Appends a node.  0, or -1 on out of memory. */
int sonde_time_tree_add(sonde_time_tree *t, int32_t func, uint32_t parent, double total,
                        double self);

/* 0, or -1 on out of memory.  The root's total is everything's. */
int sonde_time_tree_from_profile(sonde_time_tree *t, const sonde_profile *p);
/* Rebuilt from stats: every function's tottime is in the tree, shared
 * among the paths it was called on, so the root's total is the profile's
 * total time and a function's self times add up to its tottime; a
 * function that no cycle leads back to is, over its topmost frames, as
 * wide as its cumtime. */
int sonde_time_tree_from_stats(sonde_time_tree *t, const sonde_stats *s);

#endif
