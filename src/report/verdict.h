/* verdict.h - the resource summary of a run and its one-line verdict.
 *
 * What /usr/bin/time and top would tell (wall, user and sys CPU, max RSS,
 * page faults, context switches, with the children's CPU and the time
 * spent waiting for a CPU from /proc), and the conclusion a user would
 * draw: CPU-bound (in the program, in its child processes, or slowed by a
 * busy machine), waiting (on sleep, I/O, locks or child processes, named
 * from the profile's own C calls), or under memory pressure (major faults
 * while the machine stalled for memory or swapped: page-ins of files alone
 * are reads of the disk). */
#ifndef SONDE_VERDICT_H
#define SONDE_VERDICT_H

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

typedef struct sonde_usage {
    double wall, user, sys;          /* seconds; CPU of the children waited for included */
    double children_cpu;             /* of user + sys, the child processes' share; -1: unknown */
    int children_profiled;           /* the profile holds the children's calls too
                                        (run --subprocesses) */
    double run_delay;                /* seconds the main thread was ready to run but waited
                                        for a CPU (the run queue); -1: unknown */
    long max_rss_kb;
    long major_faults, minor_faults;
    long voluntary_switches, involuntary_switches;
    /* The machine's memory pressure while it ran, the evidence that major
     * faults came from memory short (not a cold file read through mmap):
     * seconds some task stalled for memory (/proc/pressure/memory's
     * "some" total) and pages swapped in (/proc/vmstat's pswpin); -1 when
     * unknown. */
    double memory_stall;
    long long swap_ins;
} sonde_usage;

/* What the run mostly waited on, by the profile's C functions. */
enum sonde_wait { SONDE_WAIT_SLEEP, SONDE_WAIT_LOCK, SONDE_WAIT_CHILD, SONDE_WAIT_IO,
                  SONDE_WAIT_KINDS };

/* The wait kind a C function label belongs to, or -1. */
int sonde_verdict_wait_kind(const char *label);

/* Appends the summary lines and the verdict line to b. */
void sonde_verdict_write(sonde_buf *b, const sonde_usage *u, const sonde_profile *p,
                         const sonde_stats *s);

#endif
