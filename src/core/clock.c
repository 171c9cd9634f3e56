/* clock.c - tick source selection and calibration; see clock.h. */
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Protected by the GIL: set once by the first sonde_clock_setup(), which
 * the profilers call holding it before they install a hook; only read
 * after that. */
int sonde_clock_use_tsc;

/* 1 when /proc/cpuinfo lists every flag an invariant TSC needs. */
static int tsc_is_invariant(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
        break;
    }
    fclose(f);
    return ok;
}

void sonde_clock_setup(void)
{
    static int done; /* protected by the GIL, as sonde_clock_use_tsc */
    if (done)
        return;
    done = 1;
#if defined(__x86_64__)
    const char *force = getenv("SONDE_CLOCK");
    if (force && strcmp(force, "ns") == 0)
        return;
    sonde_clock_use_tsc = tsc_is_invariant();
#endif
}

sonde_clock_mark sonde_clock_mark_against(clockid_t which)
{
    sonde_clock_mark best = { 0, 0 };
    uint64_t narrowest = UINT64_MAX;
    for (int try = 0; try < 8; try++) {
        struct timespec ts;
        uint64_t before = sonde_clock_ticks();
        clock_gettime(which, &ts);
        uint64_t after = sonde_clock_ticks();
        if (after - before < narrowest) {
            narrowest = after - before;
            best.ticks = before + (after - before) / 2;
            best.ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        }
    }
    return best;
}

sonde_clock_mark sonde_clock_mark_now(void)
{
    return sonde_clock_mark_against(CLOCK_MONOTONIC);
}

double sonde_clock_seconds_per_tick(sonde_clock_mark start, sonde_clock_mark end)
{
    if (!sonde_clock_use_tsc || end.ticks <= start.ticks || end.ns <= start.ns)
        return 1e-9;
    return (double)(end.ns - start.ns) * 1e-9 / (double)(end.ticks - start.ticks);
}
