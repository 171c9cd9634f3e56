/* time_tree.h - the call tree the pictures draw: from a profile's
 * calling-context tree (exact), or rebuilt from a .prof file's callers, as
 * snakeviz does: from the roots of the call graph (sonde_stats_roots),
 * each function's callees share its time in the proportions its callee
 * edges give (time_tree.c says how recursion and nesting are handled). */
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
} sonde_time_tree;

void sonde_time_tree_free(sonde_time_tree *t);

/* 0, or -1 on out of memory.  The root's total is everything's. */
int sonde_time_tree_from_profile(sonde_time_tree *t, const sonde_profile *p);
int sonde_time_tree_from_stats(sonde_time_tree *t, const sonde_stats *s);

#endif
