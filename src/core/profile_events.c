/* profile_events.c - the timeline of a sampled profile put in order: all
 * of it by time (readers that get samples thread by thread), or by thread
 * and then time (writers that write each thread's samples together).
 * Declared in profile.h. */
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* A bottom-up merge sort: stable, n log n, one buffer of n events. */
int sonde_profile_sort_events(sonde_profile *p)
{
    uint64_t n = p->nevents;
    sonde_sample_event *e = p->events;
    sonde_sample_event *tmp = malloc((n ? n : 1) * sizeof *tmp), *from = e, *to = tmp;
    if (!tmp)
        return -1;
    for (uint64_t width = 1; width < n; width *= 2) {
        for (uint64_t lo = 0; lo < n; lo += 2 * width) {
            uint64_t mid = lo + width < n ? lo + width : n;
            uint64_t hi = lo + 2 * width < n ? lo + 2 * width : n, i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                to[k++] = from[j].t_ns < from[i].t_ns ? from[j++] : from[i++];
            while (i < mid)
                to[k++] = from[i++];
            while (j < hi)
                to[k++] = from[j++];
        }
        sonde_sample_event *swap = from;
        from = to;
        to = swap;
    }
    if (from != e)
        memcpy(e, from, n * sizeof *e);
    free(tmp);
    return 0;
}

/* A counting sort by thread: the events are in time order already. */
int sonde_profile_events_by_thread(const sonde_profile *p, uint64_t **start, uint32_t **order)
{
    uint64_t *at = calloc((size_t)p->nthreads + 1, sizeof *at);
    uint64_t *fill = calloc((size_t)p->nthreads + 1, sizeof *fill);
    uint32_t *by = malloc((p->nevents ? p->nevents : 1) * sizeof *by);
    if (!at || !fill || !by) {
        free(at);
        free(fill);
        free(by);
        return -1;
    }
    for (uint64_t i = 0; i < p->nevents; i++)
        if (p->events[i].thread < p->nthreads)
            at[p->events[i].thread + 1]++;
    for (uint32_t t = 0; t < p->nthreads; t++)
        at[t + 1] += at[t];
    for (uint64_t i = 0; i < p->nevents; i++) {
        uint32_t t = p->events[i].thread;
        if (t < p->nthreads)
            by[at[t] + fill[t]++] = (uint32_t)i;
    }
    free(fill);
    *start = at;
    *order = by;
    return 0;
}
