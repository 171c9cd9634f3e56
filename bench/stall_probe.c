/* stall_probe.c - for bench/target_stalls.py: a thread that spins on the
 * clock sees every interval in which it did not run, whether a sampler
 * stopped it or the scheduler ran something else; the benchmark compares
 * what it sees under each sampler with what it sees bare. */
#include <stdint.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins for `seconds`; each gap of over min_ns between two clock reads is
 * stored in gaps[] while there is room (cap) and counted in any case.
 * Returns the number of gaps. */
__attribute__((visibility("default"))) long probe_spin(double seconds, uint64_t min_ns, uint64_t *gaps, long cap)
{
    uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9), last = start;
    long n = 0;
    for (uint64_t t = start; t < end; t = now_ns()) {
        if (t - last > min_ns) {
            if (n < cap)
                gaps[n] = t - last;
            n++;
        }
        last = t;
    }
    return n;
}
