/* perf.h - registers and stack copies of one thread, from the kernel's perf samples.
 *
 * The no-stop capture: a per-thread perf event on the thread's CPU time
 * (software clock, user mode) asks the kernel to copy the user registers
 * and the top stack_bytes of the user stack into a ring buffer at each
 * period, from the timer interrupt; the thread is never stopped or
 * signalled, and sonde reads the samples from the ring afterwards.  The
 * kernel bounds the copy to 65528 bytes, so deep stacks are cut at their
 * outer end (the unwind reports SONDE_NATIVE_OUT_OF_COPY).  The Python
 * frames of the same moment are not in the sample, nor can they be read
 * at that moment: so the sampler takes perf samples only of threads that
 * run no Python (session.h), whose stacks are native alone.  Needs
 * perf_event_open to be allowed: root, CAP_PERFMON, or
 * /proc/sys/kernel/perf_event_paranoid <= 2 for one's own processes. */
#ifndef SONDE_NATIVE_PERF_H
#define SONDE_NATIVE_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "stack.h"

#define SONDE_PERF_STACK_MAX 65528u   /* the kernel's limit on sample_stack_user */

typedef struct sonde_native_perf {
    int fd;
    int tid;
    uint8_t *ring;          /* the mapping: one control page, then the data pages */
    size_t data_size;       /* bytes of data pages, a power of two */
    uint64_t lost;          /* samples the kernel dropped: the ring was full */
    uint8_t *record;        /* one record, copied out when it wraps the ring (owned) */
} sonde_native_perf;

/* Starts sampling thread tid every period_ns of its CPU time, copying up
 * to stack_bytes (a multiple of 8, at most SONDE_PERF_STACK_MAX) of its
 * stack each time, into a ring of ring_pages data pages (a power of two).
 * 0, or a negative errno: -EACCES/-EPERM not allowed (perf_event_paranoid
 * or a container), -ESRCH no such thread, -EINVAL bad arguments. */
int sonde_native_perf_open(sonde_native_perf *p, int tid, uint64_t period_ns,
                           uint32_t stack_bytes, uint32_t ring_pages);
void sonde_native_perf_close(sonde_native_perf *p);

/* The next sample in the ring into st (st->cap bytes of stack at most),
 * with its time (CLOCK_MONOTONIC ns) in *time_ns.  1 when one was read, 0
 * when the ring is empty, -EIO for a record that makes no sense. */
int sonde_native_perf_next(sonde_native_perf *p, sonde_native_stack *st, uint64_t *time_ns);

#endif
