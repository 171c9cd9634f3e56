/* stats.h - pstats aggregates: per function and per caller->callee edge.
 *
 * The figures cProfile reports, derived exactly from a calling-context
 * tree (sonde_stats_from_profile) or read from a .prof file
 * (formats/pstats.h).  cProfile's recursion rule: a call made while the
 * same function (or the same caller->callee edge) is already active is a
 * recursive call; it counts in ncalls but not in pcalls (primitive calls),
 * and its time is not added again to cumtime.  The stats own their arrays;
 * function ids refer to the profile they were built with. */
#ifndef SONDE_STATS_H
#define SONDE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "u64map.h"

typedef struct sonde_fstat {
    uint64_t ncalls;    /* every call */
    uint64_t pcalls;    /* primitive (non-recursive) calls */
    double tottime;     /* seconds in the function itself */
    double cumtime;     /* seconds including callees, outermost calls only */
    int present;        /* the function has an entry */
} sonde_fstat;

typedef struct sonde_edge {
    uint32_t caller, callee;   /* function ids */
    uint64_t ncalls, pcalls;
    double tottime, cumtime;
} sonde_edge;

typedef struct sonde_stats {
    sonde_fstat *funcs;        /* indexed by function id */
    uint32_t nfuncs;
    size_t funcs_cap;
    sonde_edge *edges;
    uint32_t nedges;
    size_t edges_cap;
    sonde_u64map edge_index;   /* caller << 32 | callee -> edge index */
    int sampled;               /* the counts are samples, not calls (a .prof of
                                  Python 3.15's profiling.sampling) */
} sonde_stats;

void sonde_stats_init(sonde_stats *s);
void sonde_stats_free(sonde_stats *s);
/* Sizes s->funcs for nfuncs functions.  0, or -1 on out of memory. */
int sonde_stats_reserve_funcs(sonde_stats *s, uint32_t nfuncs);
/* The edge caller->callee, created zeroed when new; NULL on out of memory. */
sonde_edge *sonde_stats_edge(sonde_stats *s, uint32_t caller, uint32_t callee);

/* Derives every aggregate from p's tree.  0, or -1 on out of memory. */
int sonde_stats_from_profile(sonde_stats *s, const sonde_profile *p);

/* For a profile sampled at rate (Hz) whose stats came from its tree (no
 * calls counted): each function's count becomes its samples, as Python
 * 3.15's sampling profiler counts them (ncalls: the samples it was on the
 * stack in, pcalls: those it was running in), each edge's the samples the
 * caller was calling it in, and s->sampled is set.  Nothing when rate <= 0
 * or s->sampled is already set. */
void sonde_stats_count_samples(sonde_stats *s, double rate);

/* Totals over all functions. */
uint64_t sonde_stats_total_calls(const sonde_stats *s, uint64_t *primitive);
double sonde_stats_total_time(const sonde_stats *s);

/* Per function, the seconds it ran as a root of the call graph, 0 when it
 * is not one.  Calls no caller edge accounts for came from outside the
 * profile (the call that started it, a thread's first function): a
 * function no other function calls is a root worth its cumtime; one called
 * more often than its caller edges say (builtins.exec: the top-level call
 * and the import machinery's calls) is worth its cumtime less the time
 * spent in it from callers it does not reach (calls it cannot have been
 * nested in).  When nothing qualifies, the function with the most cumtime.
 * malloc'd (at least one entry); NULL on out of memory. */
double *sonde_stats_roots(const sonde_stats *s);

/* Edge indexes grouped by callee (by_caller = 0) or by caller: the edges
 * of function f are order[start[f] .. start[f+1]).  Both arrays are
 * malloc'd for the caller to free.  0, or -1 on out of memory. */
int sonde_stats_group_edges(const sonde_stats *s, int by_caller,
                            uint32_t **start, uint32_t **order);

#endif
