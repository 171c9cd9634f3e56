/* sharelib.c - C functions that spend known amounts of CPU, for record --native's tests.
 *
 * sl_a, sl_b and sl_c each run the same loop in their own body, n rounds,
 * so their CPU time goes in proportion to n and each is the innermost
 * frame of its own samples.  sl_spinners starts threads that never run
 * Python: each spins in sl_worker until the process ends.  sl_clock reads
 * the clock n times: its time is spent in the kernel's vdso.  Built -O2 -g
 * without frame pointers (the Makefile); noipa keeps every call a call. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define KEEP __attribute__((noipa))

/* n rounds of a multiply-add the compiler cannot fold away. */
#define SPIN(n)                                        \
    do {                                               \
        for (long i_ = 0; i_ < (n); i_++)              \
            sink = sink * 6364136223846793005u + 1u;   \
    } while (0)

static volatile uint64_t sink; /* written by every spinning thread at once: only the CPU
                                  time matters, not the value */

KEEP void sl_a(long n) { SPIN(n); }
KEEP void sl_b(long n) { SPIN(n); }
KEEP void sl_c(long n) { SPIN(n); }

KEEP long sl_clock(long n)
{
    struct timespec ts;
    long sum = 0;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec & 1;
    }
    return sum;
}

KEEP static void sl_worker(void) { for (;;) SPIN(1000000); }

static void *worker_main(void *arg)
{
    (void)arg;
    sl_worker();
    return 0;
}

/* Starts n threads spinning in sl_worker; the number started. */
KEEP int sl_spinners(int n)
{
    int started = 0;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, worker_main, 0) == 0) {
            pthread_detach(t);
            started++;
        }
    }
    return started;
}
