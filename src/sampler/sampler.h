/* sampler.h - samples a process's Python stacks at a fixed rate into a profile.
 *
 * Each tick takes one snapshot of every thread (walker.h), keeps the
 * threads the mode and the thread filter ask for (mode.h), and adds each
 * kept stack to the profile's calling-context tree: every node on the
 * path gains the sample's weight of total, the innermost one of self.
 * The weight is one tick a sample (ticks are samples, 1/rate s each), or
 * in cpu mode the CPU nanoseconds the thread used since its previous
 * sample (ticks are nanoseconds of CPU).  Ticks follow an absolute schedule
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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/profile.h"
#include "../core/u64map.h"
#include "family.h"
#include "mode.h"
#include "native/outcomes.h"
#include "thread_filter.h"
#include "walker.h"

/* The root frame of a stack whose outer frames were dropped. */
#define SONDE_SAMPLER_TRUNCATED "[truncated]"
/* The leaf frame of a stack sampled while its thread collected garbage. */
#define SONDE_SAMPLER_GC "<GC>"

/* What a native sampler counted over a run (--native): every thread
 * stack it tried, and what became of it.  Nothing is dropped silently. */
typedef struct sonde_native_tally {
    uint64_t captured;        /* thread stacks captured (registers and stack copy) */
    uint64_t stops;           /* ... tried with a ptrace stop */
    uint64_t perf_samples;    /* ... taken by the kernel (perf_event_open: no stop) */
    uint64_t lost;            /* perf samples lost: the ring was full, or more than a tick holds */
    uint64_t gone;            /* threads that ended before or while being captured */
    uint64_t traced;          /* threads another tracer held (ptrace refused), each once */
    uint64_t over;            /* running threads past what one snapshot holds, not read */
    uint64_t cut;             /* snapshots whose listing of threads was cut (time bound) */
    uint64_t ends[SONDE_NATIVE_ENDS];      /* unwinds by how they ended */
    uint64_t merges[SONDE_MERGE_RESULTS];  /* merges by result */
    uint64_t unmapped;        /* frames at an address in no mapped object (unmapped, JIT) */
    uint64_t maps_reads;      /* /proc/PID/maps read again for an address in no known object */
    uint64_t stopped_ns;      /* time threads were held stopped, in all */
    uint64_t stopped_max_ns;  /* ... the longest one stop */
} sonde_native_tally;

/* Native frames, as the sonde command provides them (src/sampler/native,
 * linked into the command only, with libstdc++ for C++ names: the
 * extension has none; sources.mk).
 * One state per sampled process. */
typedef struct sonde_native_ops {
    /* A state for w's process, sampled at rate Hz (0: once, by dump);
     * NULL with one line in err (no permission to stop its threads, out
     * of memory). */
    void *(*open)(const sonde_walker *w, int keep_interp, double rate, char *err, size_t errlen);
    void (*close)(void *state);
    /* Every thread of w's process into out[0 .. *n): merged stacks, their
     * functions interned in w's profile.  Threads off CPU are counted in
     * *idle and left out unless idle.  0, -ESRCH when the process has
     * gone, -1 on out of memory (a thread that may not be stopped after
     * open let it is counted as gone).  Threads w->filter leaves out
     * are never stopped. */
    int (*sample)(void *state, sonde_walker *w, int idle, sonde_thread_sample *out, uint32_t max,
                  uint32_t *n, uint64_t *idle_count, sonde_native_tally *t);
    /* What the tally counted, in a line or two of "sonde: native: ..." */
    void (*summary)(FILE *f, const sonde_native_tally *t);
} sonde_native_ops;

typedef struct sonde_sampler_counts sonde_sampler_counts;

typedef struct sonde_sampler_opts {
    double rate;          /* samples per second */
    double duration;      /* seconds; 0 = until the process ends or stop is set */
    int mode;             /* enum sonde_sample_mode */
    sonde_thread_filter *threads;   /* only these threads are read (--thread); NULL: all */
    int thread_roots;     /* put "thread NAME" at the root of each stack */
    int async;            /* a thread running an asyncio task: its stack goes on through the
                             tasks awaiting it, not the event loop (asyncio_tasks.h; 3.14+) */
    int async_all;        /* with async, in wall mode: every suspended task too, each tick a
                             sample of its own stack on the thread whose list holds it */
    int subprocesses;     /* each stack under "process PID (command)" (the
                             family samples every Python descendant) */
    /* Called with each batch of a snapshot's threads (may be NULL): more
     * is 1 while the snapshot has more batches to come, 0 with its last;
     * nonzero stops sampling. */
    int (*on_tick)(void *ctx, const sonde_thread_sample *threads, uint32_t n, int more);
    void *tick_ctx;
    const sonde_native_ops *native;   /* native frames too (--native); NULL: Python only */
    int native_all;                   /* keep the interpreter's own frames (--native-all) */
    /* record --every: each `every` seconds of sampling (0: never), once
     * the family has a process, on_interval gets the profile of the
     * interval that ended, [from_ns, from_ns + every) of sampling; the
     * profile is then cleared (sonde_profile_clear_tree) for the next.
     * Its timeline's times count from the interval's start.  An interval
     * sampling skipped whole (sonde was stopped) gets no call.  Nonzero
     * stops sampling. */
    double every;
    int (*on_interval)(void *ctx, sonde_profile *p, const sonde_sampler_counts *counts,
                       uint64_t from_ns);
    void *interval_ctx;
} sonde_sampler_opts;

struct sonde_sampler_counts {
    uint64_t ticks;       /* snapshots taken */
    uint64_t missed;      /* ticks skipped because a snapshot ran late */
    uint64_t torn;        /* thread stacks that could not be read whole */
    uint64_t read;        /* thread stacks read whole (with a Python frame) */
    uint64_t kept;        /* ... of which added to the profile */
    uint64_t idle;        /* ... dropped: the thread was not on a CPU */
    uint64_t not_gil;     /* ... dropped: the thread did not hold the GIL (gil mode) */
    uint64_t not_except;  /* ... dropped: the thread handled no exception (exception mode) */
    uint64_t filtered;    /* threads not read: --thread left them out */
    uint64_t cpu_unknown; /* cpu mode: kept stacks whose CPU could not be read (weighed as
                             one period each) */
    uint64_t cpu_ns;      /* cpu mode: the CPU time the kept stacks weigh, in all */
    uint64_t truncated;   /* kept stacks deeper than SONDE_WALK_MAX_DEPTH */
    uint64_t gc;          /* kept stacks collecting garbage (under SONDE_SAMPLER_GC) ... */
    uint64_t gc_weight;   /* ... and what they weigh (their CPU ns in cpu mode) */
    uint64_t tasks;       /* --async-mode all: suspended tasks' stacks added */
    uint64_t cut;         /* snapshots whose thread list was not walked to its end in 1 s */
    uint64_t blank;       /* snapshots that read no thread stack, whole or torn: the
                             interpreter not started yet or ending, or no thread in
                             Python code */
    double seconds;       /* how long sampling ran */
    int ended;            /* the root process ended while sampled */
    uint32_t denied;      /* processes whose memory sonde lost the right to read (the
                             process made itself undumpable, or changed its user):
                             their samples end there */
    int denied_pid;       /* the first of them, ... */
    double denied_at;     /* ... and when, in seconds of sampling */
    uint32_t processes;   /* processes sampled, in all */
    sonde_native_tally native;   /* with opts.native */
    char error[512];      /* why sampling stopped early (sonde_sampler_run returned -2) */
    uint64_t interval_ns; /* with every: where the profile's interval began, ns of sampling */
    int interval_failed;  /* with every: on_interval stopped sampling */
};

/* Why sonde_sampler_run stopped early: its negative returns. */
enum sonde_sampler_stop {
    SONDE_SAMPLER_NO_MEMORY = -1,     /* out of memory */
    SONDE_SAMPLER_FAILED = -2,        /* native frames could not be read, or sonde ran out of
                                         file descriptors: why in counts->error */
    SONDE_SAMPLER_NO_MODE = -3        /* a process's interpreter cannot give the mode (before
                                         any sample of it): why in counts->error */
};

/* Samples the family's processes into p until the duration passes, *stop
 * becomes nonzero, the family's root ends, or sonde may no longer read
 * the root (counts->denied); the family must be freshly initialised (the
 * caller frees it).  0, or an enum sonde_sampler_stop. */
int sonde_sampler_run(sonde_family *family, sonde_profile *p, const sonde_sampler_opts *o,
                      volatile sig_atomic_t *stop, sonde_sampler_counts *counts);

/* 1 when the options keep this thread's stack. */
int sonde_sampler_keeps(const sonde_sampler_opts *o, const sonde_thread_sample *s);

/* What a kept stack weighs: 1 (a sample), or in cpu mode its CPU ns. */
uint64_t sonde_sampler_weight(const sonde_sampler_opts *o, const sonde_thread_sample *s);

/* Adds one snapshot of w's process, taken t_ns into sampling, to p and to
 * its timeline; process_label (or NULL) becomes each stack's root frame.
 * 0, or -1 on out of memory. */
int sonde_sampler_add(sonde_profile *p, sonde_u64map *thread_index, const sonde_walker *w,
                      const char *process_label, const sonde_thread_sample *threads,
                      uint32_t n, const sonde_sampler_opts *o, uint64_t t_ns);

#endif
