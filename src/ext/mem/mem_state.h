/* mem_state.h - sonde mem's accounting: what the allocator hooks
 * (mem_hooks.c) record and what the line tracer reads at each line.
 *
 * Allocations are sampled by bytes: each thread counts down a random
 * number of bytes drawn from an exponential distribution of mean
 * sample_bytes, and the allocation that takes it to zero is sampled, with
 * the weight size / P(sampled) = size / (1 - exp(-size / sample_bytes)),
 * which makes every sum of weights an unbiased estimate of the true sum.
 * Blocks of large_bytes or more are always taken, at their exact size;
 * sample_bytes 0 takes every block.  A sampled block is followed until it
 * is released (livemap.h), so bytes released and bytes still alive are
 * estimated the same way.
 *
 * Where an allocation belongs is found one of two ways:
 *
 * - From the stack (the default): each sampled block, and each release of
 *   a followed one, reads the thread's Python stack in place (mem_frames.h)
 *   and counts its weight on every traced line on it, callees included.
 *   No event slows the program between samples; lines are seen only
 *   through their samples, so they have no hit counts.
 * - From line events (line_events): the line tracer follows every line of
 *   the traced functions; each thread's record keeps running totals of
 *   the bytes its allocations and releases weigh, and a line's figures are
 *   the differences between its start and its end, callees included, as
 *   its time is.  Exact at line boundaries and with hit counts, but each
 *   line event costs what the interpreter's tracing costs.
 *
 * The live heap is the sum of the weights of the blocks still followed;
 * RSS is read from /proc/self/statm by a timeline thread every interval
 * and, in between, whenever enough bytes have come and gone since the
 * last reading (from the stack: the change since the last such reading
 * goes to the lines on the stack of the thread that made it).
 *
 * Locking: the hooks run in any thread, with or without the GIL.  The
 * fast path touches only thread-locals; the rest takes mem_data.lock.
 * Line events run under the GIL in their own thread. */
#ifndef SONDE_MEM_STATE_H
#define SONDE_MEM_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/livemap.h"
#include "../../core/profile.h"
#include "mem_mapped.h"

/* Who allocated a block: the Python allocators, or through the shim the C
 * allocator, or an anonymous mapping (mem_mapped.h: heap only as far as
 * it is touched). */
enum mem_kind { MEM_PYTHON = 0, MEM_NATIVE = 1, MEM_MAPPED = 2 };

/* One reading of the timeline. */
typedef struct mem_point {
    uint64_t ns, rss, heap;      /* CLOCK_MONOTONIC; bytes */
    uint64_t reserved;           /* bytes mapped and not touched */
} mem_point;

/* A stretch of time in which a traced function was running. */
typedef struct mem_span {
    uint32_t code;               /* the tracer's code index */
    uint64_t start, end;         /* ns, CLOCK_MONOTONIC */
} mem_span;

#define MEM_MAX_POINTS (1u << 20)
#define MEM_MAX_SPANS (1u << 16)

typedef struct mem_data {
    uint64_t sample_bytes;       /* mean bytes between samples; 0 = all */
    uint64_t large_bytes;        /* always taken from this size on */
    uint64_t interval_ns;        /* the timeline's period */
    int native;                  /* C allocations come from the preloaded shim */
    int line_events;             /* lines from the tracer's events, not stacks */
    void *tracer;                /* the lines_tracer whose code objects count */

    pthread_mutex_t lock;        /* guards everything below */
    livemap live;                /* sampled blocks not released yet */
    sonde_profile stacks;        /* allocating stacks: nodes of (code, line) */
    uint32_t root;
    uint64_t heap, heap_peak;    /* bytes of the followed blocks (of a mapping,
                                    its touched part) */
    mem_mappings mapped;         /* the followed anonymous mappings */
    uint64_t reserved;           /* their bytes not touched */
    uint64_t churn;              /* bytes allocated + released, ever */
    uint64_t churn_at_read;      /* ... when RSS was last read */
    uint64_t rss, rss_ns;        /* the last RSS reading and when */
    uint64_t rss_attributed;     /* from the stack: RSS as lines last got it */
    sonde_u64map line_at;        /* from the stack: code index << 32 | offset -> line */
    uint32_t walk;               /* from the stack: stamps each sample's lines */
    uint64_t start_ns;
    uint64_t untracked;          /* bytes of samples bookkeeping could not hold */
    uint64_t samples;
    mem_point *points;
    uint32_t npoints, points_cap;
    mem_span *spans;
    uint32_t nspans, spans_cap;
    uint64_t spans_dropped;
    int statm_fd;
    long page_size;
    pthread_t timeline;
    pthread_cond_t wake;         /* tells the timeline thread to stop */
    int timeline_running;
    int inherited;               /* fork's copy, in the child: the timeline thread
                                    was mid-wait on `wake` in the parent, so the
                                    child never touches `wake` and destroys nothing */
    void *reserve;               /* address space released for writing results */
    uint64_t rss_high_water;     /* VmHWM when recording stopped */
} mem_data;

extern mem_data *mem_active;     /* recording, or NULL */
extern uint64_t mem_generation;  /* bumped at each start */
extern _Thread_local int mem_tls_busy __attribute__((tls_model("initial-exec")));
extern _Thread_local int64_t mem_tls_countdown __attribute__((tls_model("initial-exec")));
/* The block this thread's last sampled allocation followed, until the
 * next interpreter event (line events up to 3.11, lines_legacy.c): what
 * CPython allocates only to report a C call to a profile function. */
extern _Thread_local uintptr_t mem_tls_fresh __attribute__((tls_model("initial-exec")));
/* The address of the followed block this thread's last release took out
 * of the books, kept so that a realloc that fails can put it back (0: none). */
extern _Thread_local uintptr_t mem_tls_released __attribute__((tls_model("initial-exec")));

/* The slow paths (mem_account.c). */
void mem_sampled_alloc(void *p, size_t size, enum mem_kind kind);
void mem_mapping_made(void *p, size_t len);
void mem_followed_release(void *p);
void mem_refresh_rss(mem_data *m);
void mem_unfollow(void *p);
void mem_restore(void *p);

/* Takes back the allocation of the block at p, made by the interpreter
 * only because sonde is listening (an event's argument, a frame object
 * made for a trace function): as if it had never been allocated. */
static inline void mem_forget(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (m && p && livemap_maybe(&m->live, p))
        mem_unfollow(p);
}

/* An allocation of size bytes at p (NULL when it failed). */
static inline void mem_on_alloc(void *p, size_t size, enum mem_kind kind)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m || mem_tls_busy)
        return;
    mem_tls_countdown -= (int64_t)size;
    if (mem_tls_countdown > 0 && size < m->large_bytes)
        return;
    mem_sampled_alloc(p, size, kind);
}

/* A new anonymous mapping of len bytes at p: always followed, whole. */
static inline void mem_on_map(void *p, size_t len)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (m && p && len && !mem_tls_busy)
        mem_mapping_made(p, len);
}

/* The release of the block at p, before it happens. */
static inline void mem_on_release(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m || mem_tls_busy || !p || !livemap_maybe(&m->live, p))
        return;
    mem_followed_release(p);
}

/* The block at p was made by the interpreter for the event being
 * reported when it is still the one mem_tls_fresh names: taken back. */
static inline void mem_forget_fresh(void *p)
{
    if (mem_tls_fresh == (uintptr_t)p)
        mem_forget(p);
    mem_tls_fresh = 0;
}

/* A release that may be taken back (mem_on_restore): realloc's. */
static inline void mem_on_release_undoable(void *p)
{
    if (!mem_tls_busy)
        mem_tls_released = 0; /* an outer hook's stays */
    mem_on_release(p);
}

/* The release of p just reported did not happen (a realloc that failed
 * leaves its block as it was): p goes back into the books as it was.
 * Only for a release this thread reported last. */
static inline void mem_on_restore(void *p)
{
    if (p && !mem_tls_busy && mem_tls_released == (uintptr_t)p)
        mem_restore(p);
}

/* RSS as last read, read again first when at least this many bytes came
 * and went since (a line that allocates a lot sees its own effect).  For
 * line events. */
#define MEM_RSS_CHURN (256u * 1024)

static inline uint64_t mem_rss(mem_data *m)
{
    if (__atomic_load_n(&m->churn, __ATOMIC_RELAXED) -
            __atomic_load_n(&m->churn_at_read, __ATOMIC_RELAXED) >= MEM_RSS_CHURN)
        mem_refresh_rss(m);
    return __atomic_load_n(&m->rss, __ATOMIC_RELAXED);
}

/* The bookkeeping's lock, for changes samples may read (m may be NULL). */
static inline void mem_lock(mem_data *m)
{
    if (m) {
        mem_tls_busy++;
        pthread_mutex_lock(&m->lock);
    }
}

static inline void mem_unlock(mem_data *m)
{
    if (m) {
        pthread_mutex_unlock(&m->lock);
        mem_tls_busy--;
    }
}

static inline uint64_t mem_heap(mem_data *m)
{
    return __atomic_load_n(&m->heap, __ATOMIC_RELAXED);
}

/* Starting and stopping the bookkeeping (mem_account.c): the timeline
 * thread, the RSS readings.  mem_account_start: 0, or -1 with errno. */
int mem_account_start(mem_data *m);
void mem_account_stop(mem_data *m);

/* Starting and stopping the hooks (mem_hooks.c), GIL held: the Python
 * allocators' and, when the shim is preloaded, the C allocator's (which
 * sets m->native).  mem_start: 0, or -1 with an exception. */
int mem_start(mem_data *m);
void mem_stop(mem_data *m);

/* A new mem_data for these settings (NULL on out of memory); its owner
 * frees it with mem_data_free once stopped. */
mem_data *mem_data_new(uint64_t sample_bytes, uint64_t interval_ns, int line_events,
                       void *tracer);
void mem_data_free(mem_data *m);

/* Records that traced code `code` started (end = 0) or ended running at
 * `ns`, merging with its last span when that ended under half an
 * interval ago.  GIL held. */
void mem_span_mark(mem_data *m, uint32_t code, int64_t *last_span, uint64_t ns, int end);

#endif
