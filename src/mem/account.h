/* account.h - sonde mem's accounting: what the allocator hooks record,
 * where each block belongs, and what the results read.
 *
 * Allocations are sampled by bytes: each thread counts down a random
 * number of bytes drawn from an exponential distribution of mean
 * sample_bytes, and the allocation that takes it to zero is sampled, with
 * the weight size / P(sampled) = size / (1 - exp(-size / sample_bytes)),
 * which makes every sum of weights an unbiased estimate of the true sum.
 * Blocks of large_bytes or more are always taken, at their exact size;
 * sample_bytes 0 takes every block.  A sampled block is followed until it
 * is released (livemap.h), so bytes released and bytes still alive are
 * estimated the same way.  The random draws come from a seed per thread:
 * from the clock, or from mem_data.seed (SONDE_SEED) to replay a run.
 *
 * Where an allocation belongs is found one of two ways, among the code
 * objects registered as sites (mem_site_add):
 *
 * - From the stack (the default): each sampled block, and each release of
 *   a followed one, reads the thread's Python stack in place (mem_host's
 *   frames), and the stacks of the threads that started it (starter_frames:
 *   a worker's bytes are the waiting line's too), and counts its weight
 *   on every site line on them, callees included.  No event slows the program between samples; lines are
 *   seen only through their samples, so they have no hit counts.
 * - From line events (line_events): the line tracer reports activations
 *   and lines (mem.h); each thread's shadow stack keeps running totals of
 *   the bytes its allocations and releases weigh, and a line's figures
 *   are the differences between its start and its end, callees included,
 *   as its time is.  Exact at line boundaries and with hit counts, but
 *   each line event costs what the interpreter's tracing costs.  What the
 *   events cannot see, a thread's samples outside any traced activation
 *   and what workers owe their starter's lines, is placed from the stack.
 *
 * The live heap is the sum of the weights of the blocks still followed
 * (of an anonymous mapping, its touched part: mapped.h); RSS is read from
 * /proc/self/statm by a timeline thread every interval and, in between,
 * whenever enough bytes have come and gone since the last reading (from
 * the stack: the change since the last such reading goes to the lines on
 * the stack of the thread that made it).
 *
 * This part compiles without Python: what it needs of the interpreter (a
 * thread's stack, a code object's lines) comes through mem_host, so its
 * arithmetic is tested in C (tests/c/test_mem.c).
 *
 * Locking: the hooks run in any thread, with or without the GIL.  The fast
 * path touches only thread-locals and atomics; the rest takes
 * mem_data.lock.  The sites and per-line figures change under the lock
 * (samples read them from any thread); the shadow stacks and spans of line
 * events change under the GIL, in the line tracer's events. */
#ifndef SONDE_MEM_ACCOUNT_H
#define SONDE_MEM_ACCOUNT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/livemap.h"
#include "../core/profile.h"
#include "../core/u64map.h"
#include "mapped.h"
#include "mem.h"

/* Who allocated a block: the Python allocators, or through the shim the C
 * allocator, or an anonymous mapping (mapped.h: heap only as far as it is
 * touched). */
enum mem_kind { MEM_PYTHON = 0, MEM_NATIVE = 1, MEM_MAPPED = 2 };

/* One reading of the timeline. */
typedef struct mem_point {
    uint64_t ns, rss, heap;      /* CLOCK_MONOTONIC; bytes */
    uint64_t reserved;           /* bytes mapped and not touched */
} mem_point;

/* A stretch of time in which a site was running. */
typedef struct mem_span {
    uint32_t site;
    uint64_t start, end;         /* ns, CLOCK_MONOTONIC; end 0: still running */
} mem_span;

#define MEM_MAX_POINTS (1u << 20)
#define MEM_MAX_SPANS (1u << 16)

/* One frame of a thread's stack: its code object and the offset (in
 * bytes) of the instruction it is running, or -1 before its first one. */
typedef struct mem_frame {
    const void *code;
    int offset;
} mem_frame;

/* What the accounting asks of the interpreter.  Called inside allocator
 * hooks, in any thread, with or without the GIL: they make no objects and
 * run no Python code. */
typedef struct mem_host {
    /* Up to max frames of the calling thread, innermost first. */
    int (*frames)(mem_frame *out, int max);
    /* The same of the threads that started the calling one (its starter,
     * then the starter's starter...), which run on meanwhile; 0 when none
     * is known or alive but the calling thread.  NULL: no
     * such reading (a thread's allocations are then its own stack's). */
    int (*starter_frames)(mem_frame *out, int max);
    /* The same of the thread that started recording, read from another
     * thread without the GIL (the timeline's).  NULL: no such reading. */
    int (*recorder_frames)(mem_frame *out, int max);
    /* The line of the instruction at `offset` (bytes) of code; <= 0 when
     * it has none. */
    int (*line_of)(const void *code, int offset);
} mem_host;

/* A line's figures, callees included. */
typedef struct mem_line_figures {
    uint64_t alloc, freed;       /* bytes allocated / released while it ran */
    uint64_t net;                /* of those allocated, bytes alive at the end */
    uint64_t reserved;           /* of those, mapped and never touched at the end */
    uint64_t peak_heap;          /* the most heap bytes seen while it ran */
    uint64_t rss_max;            /* the most RSS at its end */
    int64_t rss_increment;       /* RSS at its end less RSS at its start, summed */
    uint32_t stamp;              /* the figures walk that last counted it */
    uint32_t seen;               /* from the stack: the sample that last counted it */
} mem_line_figures;

/* A code object whose lines get figures.  Each is allocated alone: the
 * shadow stacks point at them. */
typedef struct mem_site {
    const void *code;            /* the code object's address: its identity */
    char *file, *name;           /* as the document shows them (owned) */
    int first, nlines;           /* lines first .. first + nlines - 1 */
    const uint64_t *hits;        /* the line tracer's hits of these lines, or NULL
                                    (borrowed: the tracer outlives m) */
    mem_line_figures *lines;     /* nlines */
    uint32_t index;              /* in mem_data.sites */
    uint32_t active;             /* line events: open activations, all threads */
    int64_t last_span;           /* its latest timeline span, or -1 */
    uint64_t seen_reading;       /* from the stack: the last of the recording thread's
                                    readings (mem_data.readings) to see it, or 0 */
} mem_site;

/* Frames read per sample from the stack (the innermost ones; 4 KiB of the
 * allocating thread's stack between the two arrays that hold them). */
#define MEM_MAX_FRAMES 128

/* From the stack: a line of a site, as a frame of a sample shows it. */
typedef struct mem_site_line {
    mem_site *site;
    int line;
} mem_site_line;

/* Line events: an open activation on a thread's shadow stack. */
typedef struct mem_open {
    mem_site *site;              /* NULL: nested code (MEM_NESTED) */
    int line;                    /* the open line, or -1 */
    uint64_t alloc0, freed0;     /* the thread's totals when the line opened */
    uint64_t rss0;               /* RSS then */
    uint64_t peak;               /* the most heap seen since it opened */
    uint32_t node;               /* the allocating stack's node (0: not known yet) */
} mem_open;

/* Line events: a thread's shadow stack, in step with the line tracer's. */
typedef struct mem_thread {
    mem_open *stack;
    uint32_t depth;
    size_t cap;
    uint64_t alloc_total, freed_total; /* bytes (weights) so far */
    struct mem_thread *next;
} mem_thread;

/* What was allocated at one stack node, ever: the followed blocks' weights
 * and the allocations they stand for (a sampled block of size s weighs w
 * bytes: w / s allocations). */
typedef struct mem_node_alloc {
    uint64_t bytes;
    double objects;
} mem_node_alloc;

struct mem_data {
    uint64_t sample_bytes;       /* mean bytes between samples; 0 = all */
    uint64_t large_bytes;        /* always taken from this size on */
    uint64_t interval_ns;        /* the timeline's period */
    int native;                  /* C allocations come from the preloaded shim */
    int line_events;             /* lines from the tracer's events, not stacks */
    uint64_t seed;               /* 0: each thread seeds from the clock */
    uint32_t seeded;             /* threads seeded from `seed` so far (atomic) */
    mem_host host;
    const void *floor;           /* from the stack: the code whose frame started the
                                    program (sonde's launcher); it and the frames
                                    outside it are not the program's.  NULL: none */

    pthread_mutex_t lock;        /* guards everything below but the shadow stacks */
    sonde_livemap live;                /* sampled blocks not released yet */
    sonde_profile stacks;        /* allocating stacks: nodes of (site, line); a node's
                                    func is its site's index (no function table) */
    uint32_t root;
    mem_site **sites;            /* registered code objects, in order */
    uint32_t nsites;
    size_t sites_cap;
    sonde_u64map site_of;        /* code address -> site index */
    mem_node_alloc *allocs;      /* per node of stacks: what was allocated there */
    size_t allocs_cap;
    uint64_t heap, heap_peak;    /* bytes of the followed blocks (of a mapping,
                                    its touched part) */
    mem_mappings mapped;         /* the followed anonymous mappings */
    uint64_t reserved;           /* their bytes not touched */
    uint64_t churn;              /* bytes allocated + released, ever */
    uint64_t churn_at_read;      /* ... when RSS was last read */
    uint64_t rss, rss_ns;        /* the last RSS reading and when */
    uint64_t rss_most;           /* the largest reading */
    uint64_t rss_attributed;     /* from the stack: RSS as lines last got it */
    mem_site_line rss_lines[MEM_MAX_FRAMES]; /* from the stack: the lines of the stack
                                    RSS was last read on, which get its change */
    int rss_nlines;
    sonde_u64map line_at;        /* from the stack: site << 32 | offset -> line */
    uint32_t walk;               /* from the stack: stamps each sample's lines */
    uint64_t start_ns;
    uint64_t untracked;          /* bytes of samples bookkeeping could not hold */
    uint64_t samples;
    mem_point *points;
    uint32_t npoints;
    size_t points_cap;
    mem_span *spans;             /* from the stack: under the lock; with line
                                    events: under the GIL (only events mark them) */
    uint32_t nspans;
    size_t spans_cap;
    uint64_t spans_dropped;
    uint64_t readings;           /* from the stack: of the recording thread's stack,
                                    for the spans (mem_spans_of_recorder) */
    int statm_fd;
    long page_size;
    pthread_t timeline;
    pthread_cond_t wake;         /* tells the timeline thread to stop, and its
                                    starter that it runs */
    int timeline_running;
    int timeline_started;        /* under the lock: the thread is past its start */
    int inherited;               /* fork's copy, in the child: the timeline thread
                                    was mid-wait on `wake` in the parent, so the
                                    child never touches `wake` and destroys nothing */
    void *reserve;               /* address space released for writing results */
    uint64_t rss_high_water;     /* VmHWM when recording stopped, or the largest
                                    reading where the kernel's mark lags it */

    mem_thread *threads;         /* line events: every thread's shadow stack (GIL) */
};

/* The recording, or NULL.  Published with a release store by
 * mem_account_start, read with acquire loads by the hooks in any thread. */
extern mem_data *mem_active;
/* Bumped by each mem_account_start, before mem_active is published: a
 * thread that sees a recording sees its generation (relaxed loads after
 * the acquire of mem_active).  Written only there, one start at a time. */
extern uint64_t mem_generation;
/* Thread-local: this thread is inside sonde's own code (its allocations
 * are not the program's). */
extern _Thread_local int mem_tls_busy __attribute__((tls_model("initial-exec")));
/* Thread-local: bytes until this thread's next sample. */
extern _Thread_local int64_t mem_tls_countdown __attribute__((tls_model("initial-exec")));
/* Thread-local: the block this thread's last sampled allocation followed,
 * until the next interpreter event (mem_event, mem_forget_fresh). */
extern _Thread_local uintptr_t mem_tls_fresh __attribute__((tls_model("initial-exec")));
/* Thread-local: the address of the followed block this thread's last
 * release took out of the books, kept so that a realloc that fails can
 * put it back (0: none). */
extern _Thread_local uintptr_t mem_tls_released __attribute__((tls_model("initial-exec")));

/* In a child the program forked that is followed (sonde mem
 * --subprocesses), in its only thread, before it allocates for the
 * program: the books start again from zero, now -- the blocks the parent
 * followed are not the child's to release, the figures so far are the
 * parent's -- and recording goes on, with a timeline thread of the
 * child's own.  The activations open in the calling thread stay open, as
 * if opened now (mem_sites_forked).  A recording the fork did not copy
 * running (not m's) is left alone.  0, or -1 (errno set) when the books
 * cannot be started again: m then records nothing. */
int mem_account_forked(mem_data *m);
/* The sites' part of it (sites.c): lines' figures and spans cleared, the
 * other threads' shadow stacks gone, this thread's open from now. */
void mem_sites_forked(mem_data *m);

/* ---- the hooks' entry points (any thread) ---- */

/* The slow paths (account.c). */
void mem_sampled_alloc(void *p, size_t size, enum mem_kind kind);
void mem_mapping_made(void *p, size_t len);
void mem_followed_release(void *p);
void mem_refresh_rss(mem_data *m);
void mem_restore(void *p);
void mem_followed_reused(void *p);

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

/* An object made at the start of the block at p without the allocator:
 * the interpreter took the block back from one of its free lists.  A
 * followed block moves to the calling thread's stack, as tracemalloc
 * moves its trace; one this thread has just followed is there already. */
static inline void mem_on_reuse(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m || mem_tls_busy || mem_tls_fresh == (uintptr_t)p || !sonde_livemap_maybe(&m->live, p))
        return;
    mem_followed_reused(p);
}

/* The release of the block at p, before it happens. */
static inline void mem_on_release(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m || mem_tls_busy || !p || !sonde_livemap_maybe(&m->live, p))
        return;
    mem_followed_release(p);
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

/* ---- reading the books ---- */

/* The bookkeeping's lock, taken by sonde's own code (whose allocations
 * the hooks then leave alone). */
static inline void mem_lock(mem_data *m)
{
    mem_tls_busy++;
    pthread_mutex_lock(&m->lock);
}

static inline void mem_unlock(mem_data *m)
{
    pthread_mutex_unlock(&m->lock);
    mem_tls_busy--;
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

static inline uint64_t mem_heap(mem_data *m)
{
    return __atomic_load_n(&m->heap, __ATOMIC_RELAXED);
}

/* The weight of a sampled block of `size` bytes (see above). */
uint64_t mem_weight(const mem_data *m, size_t size);

/* ---- life cycle (account.c) ---- */

/* A new mem_data for these settings (NULL on out of memory); its owner
 * frees it with mem_data_free once stopped.  seed 0: from the clock. */
mem_data *mem_data_new(uint64_t sample_bytes, uint64_t interval_ns, int line_events,
                       const mem_host *host, uint64_t seed);
void mem_data_free(mem_data *m);

/* Starts recording (the timeline thread, the first RSS reading, then
 * mem_active): 0, or -1 with errno.  Stops it: open activations close,
 * the timeline thread ends, spans still open end now. */
int mem_account_start(mem_data *m);
void mem_account_stop(mem_data *m);

/* ---- sites (sites.c) ---- */

/* Registers code (its address) as a site of nlines lines from `first`,
 * shown as file and name (copied); hits: the line tracer's hit counts of
 * those lines (borrowed), or NULL.  Its index, or MEM_NO_SITE on out of
 * memory.  GIL held. */
uint32_t mem_site_add(mem_data *m, const void *code, const char *file, const char *name,
                      int first, int nlines, const uint64_t *hits);

/* Records that site s started (end = 0) or ended running at `ns`, merging
 * with its last span when that ended under half an interval ago.  The
 * lock held (from the stack) or, with line events, the GIL (see spans). */
void mem_span_mark(mem_data *m, mem_site *site, uint64_t ns, int end);

/* ---- between account.c and sites.c (the lock held) ---- */

/* From the stack, the sites on the recording thread's stack, n frames
 * read just before (host.recorder_frames, outside the lock: it walks the
 * interpreter's thread list), go on running in the timeline (its spans),
 * whether they allocate or not (the timeline thread, each interval). */
void mem_spans_of_recorder(mem_data *m, const mem_frame *frames, int n);

/* Reads RSS for the timeline (account.c); churned: bytes coming and going
 * asked for it (see MEM_RSS_CHURN). */
void mem_read_rss(mem_data *m, int churned);

/* Where an allocation of `weight` bytes by the calling thread belongs: the
 * node of its stack.  From the stack, its weight counts on the site lines
 * on it. */
uint32_t mem_place_alloc(mem_data *m, uint64_t weight);
/* The same for a followed block at `node` taken again from a free list:
 * the node of the calling thread's stack; when that is another, the weight
 * counts there as allocated. */
uint32_t mem_place_again(mem_data *m, uint64_t weight, uint32_t node);
/* Line events: the calling thread's totals and its top activation's peak
 * heap take in that allocation, once it is in the books. */
void mem_thread_allocated(mem_data *m, uint64_t weight);

/* What happened to a followed block leaving the books. */
enum mem_leaving { MEM_RELEASED, MEM_FORGOTTEN, MEM_RESTORED };
/* A followed block of `weight` bytes was released by the calling thread,
 * forgotten (as if never allocated), or restored (its release undone). */
void mem_place_release(mem_data *m, uint64_t weight, enum mem_leaving how);

/* From the stack, RSS just read (m->rss): its change since the reading
 * before goes to the lines that reading was taken on (lock held). */
void mem_sites_rss_read(mem_data *m);

/* Closes every thread's open activations (recording stops); frees the
 * sites and the shadow stacks. */
void mem_sites_unwind(mem_data *m);
void mem_sites_free(mem_data *m);

/* ---- the figures at the end (figures.c; recording stopped) ---- */

/* The bytes alive per stack node: the followed blocks summed by node (of
 * a mapping, its touched part; the rest is reserved). */
typedef struct mem_node_bytes {
    uint64_t *all, *native, *reserved;
    double *objects;             /* the allocations those bytes stand for */
    uint32_t n;                  /* nodes */
} mem_node_bytes;

/* Sums them, and sets each site line's net and reserved bytes: the blocks
 * alive whose stack passes through it, each counted once however often the
 * line recurs in that stack.  0, or -1 on out of memory (free nb anyway). */
int mem_figures_net(mem_data *m, mem_node_bytes *nb);
void mem_node_bytes_free(mem_node_bytes *nb);

/* The nodes where anything was allocated, most bytes first: a new array
 * of *count nodes, or NULL on out of memory. */
uint32_t *mem_allocations(const mem_data *m, uint32_t *count);

/* The nodes with blocks alive (or reserved), largest first (then the most
 * reserved): a new array of *count nodes, or NULL on out of memory. */
uint32_t *mem_leaks(const mem_data *m, const mem_node_bytes *nb, uint32_t *count);

/* The site and line of node n, or NULL (a root). */
const mem_site *mem_node_site(const mem_data *m, uint32_t n, int *line);

#endif
