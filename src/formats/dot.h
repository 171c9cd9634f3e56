/* dot.h - the call graph as Graphviz source, as gprof2dot draws it: one
 * node per function with its share of the total time (callees included)
 * and, in brackets, its own share, and its calls; one edge per caller ->
 * callee with its calls and share; colours from blue (little) to red
 * (most).  Functions and edges under the thresholds are left out. */
#ifndef SONDE_DOT_H
#define SONDE_DOT_H

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

typedef struct sonde_dot_opts {
    double node_thres;   /* percent of the total time; gprof2dot's default 0.5 */
    double edge_thres;   /* percent; gprof2dot's default 0.1 */
} sonde_dot_opts;

/* 0, or -1 on out of memory. */
int sonde_dot_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                    const sonde_dot_opts *o);

#endif
