/* sampler.h - samples a process's Python stacks at a fixed rate into a profile.
 *
 * Each tick takes one snapshot of every thread (walker.h), keeps the
 * threads the options ask for, and adds each kept stack to the profile's
 * calling-context tree: every node on the path gains one sample of total,
 * the innermost one a sample of self.  Ticks follow an absolute schedule
 * (CLOCK_MONOTONIC), so a slow snapshot is not made up by sampling twice:
 * it is counted as missed.  Each sample is taken at a point of its period
 * given by the golden-ratio sequence: the rate stays exact, a program that
 * repeats itself in step with the period is not seen at one phase only,
 * and shares converge faster than with random points. */
#ifndef SONDE_SAMPLER_H
#define SONDE_SAMPLER_H

#include <signal.h>
#include <stdint.h>

#include "../core/profile.h"
#include "../core/u64map.h"
#include "walker.h"

typedef struct sonde_sampler_opts {
    double rate;          /* samples per second */
    double duration;      /* seconds; 0 = until the process ends or stop is set */
    int idle;             /* keep threads that are not on a CPU */
    int gil_only;         /* keep only the thread holding the GIL */
    int thread_roots;     /* put "thread NAME" at the root of each stack */
    int subprocesses;     /* sample Python descendants too, each stack under
                             "process PID (command)" */
    /* Called after each snapshot with the threads kept (may be NULL);
     * nonzero stops sampling. */
    int (*on_tick)(void *ctx, const sonde_thread_sample *threads, uint32_t n);
    void *tick_ctx;
} sonde_sampler_opts;

typedef struct sonde_sampler_counts {
    uint64_t ticks;       /* snapshots taken */
    uint64_t missed;      /* ticks skipped because a snapshot ran late */
    uint64_t torn;        /* thread stacks that could not be read whole */
    uint64_t stacks;      /* thread stacks added to the profile */
    double seconds;       /* how long sampling ran */
    int ended;            /* the process ended (or exec'd) while sampled */
    uint32_t processes;   /* processes sampled (more than 1 with subprocesses) */
} sonde_sampler_counts;

/* Samples w's process into p until the duration passes, *stop becomes
 * nonzero, or the process ends.  0, or -1 on out of memory. */
int sonde_sampler_run(sonde_walker *w, sonde_profile *p, const sonde_sampler_opts *o,
                      volatile sig_atomic_t *stop, sonde_sampler_counts *counts);

/* 1 when the options keep this thread's stack. */
int sonde_sampler_keeps(const sonde_sampler_opts *o, const sonde_thread_sample *s);

/* Adds one snapshot of w's process, taken t_ns into sampling, to p and to
 * its timeline; process_label (or NULL) becomes each stack's root frame.
 * 0, or -1 on out of memory. */
int sonde_sampler_add(sonde_profile *p, sonde_u64map *thread_index, const sonde_walker *w,
                      const char *process_label, const sonde_thread_sample *threads,
                      uint32_t n, const sonde_sampler_opts *o, uint64_t t_ns);

#endif
