/* clock.h - the tracer's clock: cheap monotonic ticks.
 *
 * On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo) a tick is one TSC cycle, read in about 9 ns here against
 * 21 ns for clock_gettime; elsewhere a tick is a nanosecond of
 * CLOCK_MONOTONIC.  Ticks become seconds through a calibration taken over
 * the profile's own duration (sonde_clock_seconds_per_tick). */
#ifndef SONDE_CLOCK_H
#define SONDE_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

extern int sonde_clock_use_tsc;   /* decided once by sonde_clock_setup(), under the GIL */

void sonde_clock_setup(void);

static inline uint64_t sonde_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t sonde_clock_ticks(void)
{
#if defined(__x86_64__)
    if (sonde_clock_use_tsc)
        return __rdtsc();
#endif
    return sonde_clock_ns();
}

/* A pair of readings taken together, to calibrate ticks against time. */
typedef struct sonde_clock_mark {
    uint64_t ticks, ns;
} sonde_clock_mark;

/* Ticks against CLOCK_MONOTONIC (sonde_clock_mark_against). */
sonde_clock_mark sonde_clock_mark_now(void);
/* Ticks against clock `which`, read between two tick readings: of a few
 * tries the one the least time apart (an interrupt or a preemption between
 * the readings would set the pair off by its length), its ticks the
 * middle of the two. */
sonde_clock_mark sonde_clock_mark_against(clockid_t which);
/* Seconds per tick measured between two marks. */
double sonde_clock_seconds_per_tick(sonde_clock_mark start, sonde_clock_mark end);

#endif
