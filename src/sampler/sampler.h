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
 * and shares converge faster than with random points.
 *
 * What is sampled is a family (family.h): the process sonde was pointed
 * at when it runs Python, else the Python processes it starts; with
 * subprocesses, their Python descendants too.  A stack deeper than
 * SONDE_WALK_MAX_DEPTH keeps its innermost frames under a "[truncated]"
 * frame, so that its share of the samples stays where it was spent. */
#ifndef SONDE_SAMPLER_H
#define SONDE_SAMPLER_H

#include <signal.h>
#include <stdint.h>

#include "../core/profile.h"
#include "../core/u64map.h"
#include "family.h"
#include "walker.h"

/* The root frame of a stack whose outer frames were dropped. */
#define SONDE_SAMPLER_TRUNCATED "[truncated]"

typedef struct sonde_sampler_opts {
    double rate;          /* samples per second */
    double duration;      /* seconds; 0 = until the process ends or stop is set */
    int idle;             /* keep threads that are not on a CPU */
    int gil_only;         /* keep only the thread holding the GIL */
    int thread_roots;     /* put "thread NAME" at the root of each stack */
    int subprocesses;     /* each stack under "process PID (command)" (the
                             family samples every Python descendant) */
    /* Called after each snapshot with the threads kept (may be NULL);
     * nonzero stops sampling. */
    int (*on_tick)(void *ctx, const sonde_thread_sample *threads, uint32_t n);
    void *tick_ctx;
} sonde_sampler_opts;

typedef struct sonde_sampler_counts {
    uint64_t ticks;       /* snapshots taken */
    uint64_t missed;      /* ticks skipped because a snapshot ran late */
    uint64_t torn;        /* thread stacks that could not be read whole */
    uint64_t read;        /* thread stacks read whole (with a Python frame) */
    uint64_t kept;        /* ... of which added to the profile */
    uint64_t idle;        /* ... dropped: the thread was not on a CPU */
    uint64_t not_gil;     /* ... dropped: the thread did not hold the GIL (gil_only) */
    uint64_t truncated;   /* kept stacks deeper than SONDE_WALK_MAX_DEPTH */
    double seconds;       /* how long sampling ran */
    int ended;            /* the root process ended while sampled */
    uint32_t processes;   /* processes sampled, in all */
} sonde_sampler_counts;

/* Samples the family's processes into p until the duration passes, *stop
 * becomes nonzero, or the family's root ends; the family must be freshly
 * initialised (the caller frees it).  0, or -1 on out of memory. */
int sonde_sampler_run(sonde_family *family, sonde_profile *p, const sonde_sampler_opts *o,
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
