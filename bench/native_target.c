/* native_target.c - a CPU-bound program for bench/native_stop.c.
 *
 *   native_target SECONDS THREADS
 * Each thread spins in a chain of 24 calls (-O2, no frame pointers, as
 * libraries are built) and counts the work it gets done.  The program
 * prints "ready" once every thread runs, and at the end the work done per
 * second in all, which the benchmark compares with and without sampling. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 24

static volatile int stop_now;            /* set once by main: threads stop */
static volatile unsigned long work[256]; /* per thread, written by that thread only */

static unsigned long spin(int depth, unsigned long x);
/* Called through a pointer the compiler cannot see through, so that the
 * recursion stays DEPTH real calls (no tail-recursion loop). */
static unsigned long (*volatile again)(int, unsigned long) = spin;

__attribute__((noipa)) static unsigned long spin(int depth, unsigned long x)
{
    if (depth > 0)
        return again(depth - 1, x * 6364136223846793005ul + 1) + 1;
    for (int i = 0; i < 2000; i++)
        x = x * 2862933555777941757ul + 3037000493ul;
    return x;
}

static void *run(void *arg)
{
    long me = (long)arg;
    unsigned long x = (unsigned long)me;
    while (!stop_now) {
        x += spin(DEPTH, x);
        work[me]++;
    }
    return (void *)x;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    long threads = argc > 2 ? atol(argv[2]) : 1;
    if (threads < 1 || threads > 256)
        return 2;
    pthread_t t[256];
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, run, (void *)i);
    printf("ready\n");
    fflush(stdout);
    struct timespec d = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    nanosleep(&d, NULL);
    stop_now = 1;
    unsigned long total = 0;
    for (long i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        total += work[i];
    }
    printf("%.0f\n", (double)total / seconds);
    return 0;
}
