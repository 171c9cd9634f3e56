/* account.c - sonde mem's bookkeeping behind the allocator hooks:
 * sampling, the followed blocks, RSS readings and the timeline, fork, and
 * the life cycle.  Where a block belongs is sites.c's.  See account.h for
 * the model and the locking. */
#include "account.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/grow.h"

mem_data *mem_active;            /* see account.h: atomic, release / acquire */
uint64_t mem_generation;         /* see account.h: atomic, written by one start at a time */
/* Thread-local, each read and written by its own thread only (account.h). */
_Thread_local int mem_tls_busy __attribute__((tls_model("initial-exec")));
_Thread_local int64_t mem_tls_countdown __attribute__((tls_model("initial-exec")));
_Thread_local uintptr_t mem_tls_fresh __attribute__((tls_model("initial-exec")));
_Thread_local uintptr_t mem_tls_released __attribute__((tls_model("initial-exec")));
/* Thread-local: what the release of mem_tls_released took out of the books. */
static _Thread_local sonde_livemap_entry tls_released_entry
    __attribute__((tls_model("initial-exec")));
/* Thread-local: the recording this thread's countdown and draws are for. */
static _Thread_local uint64_t tls_generation __attribute__((tls_model("initial-exec")));
/* Thread-local: the state of this thread's random draws (xorshift64*). */
static _Thread_local uint64_t tls_random __attribute__((tls_model("initial-exec")));

/* Released blocks at least this big have RSS read just before, so the
 * timeline holds the peak they made. */
#define MEM_BIG_RELEASE (1u << 20)
/* Address space kept for writing the results when the program ran out. */
#define MEM_RESERVE (32u << 20)

/* Bytes until the next sample: exponential with mean `mean` (xorshift64*). */
static int64_t draw(uint64_t mean)
{
    if (!mean)
        return 0;
    tls_random ^= tls_random >> 12;
    tls_random ^= tls_random << 25;
    tls_random ^= tls_random >> 27;
    double u = (double)((tls_random * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
    return (int64_t)(-log1p(-u) * (double)mean) + 1;
}

/* A thread's first draws of a recording: from the clock, or from the
 * recording's seed and the order in which threads first sampled. */
static uint64_t first_state(mem_data *m)
{
    if (!m->seed)
        return (uint64_t)pthread_self() ^ sonde_clock_ns() ^ 0x9E3779B97F4A7C15ull;
    uint64_t z = m->seed + 0x9E3779B97F4A7C15ull *
                               (1 + __atomic_fetch_add(&m->seeded, 1, __ATOMIC_RELAXED));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; /* splitmix64's finaliser */
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
}

uint64_t mem_weight(const mem_data *m, size_t size)
{
    if (size >= m->large_bytes || !m->sample_bytes)
        return size;
    return (uint64_t)((double)size / -expm1(-(double)size / (double)m->sample_bytes) + 0.5);
}

static void store(uint64_t *v, uint64_t x) { __atomic_store_n(v, x, __ATOMIC_RELAXED); }

/* ---- RSS and the timeline (lock held) ---- */

static uint64_t read_statm(mem_data *m)
{
    char buf[128];
    ssize_t n = pread(m->statm_fd, buf, sizeof buf - 1, 0);
    unsigned long long size, resident;
    if (n <= 0)
        return m->rss;
    buf[n] = '\0';
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return m->rss;
    return (uint64_t)resident * (uint64_t)m->page_size;
}

/* Past the cap, pairs of points become the one with more RSS: the
 * timeline gets coarser but keeps its peaks. */
static void add_point(mem_data *m, uint64_t ns, uint64_t rss)
{
    if (m->npoints == m->points_cap) {
        if (m->points_cap == MEM_MAX_POINTS) {
            uint32_t k = 0;
            for (uint32_t i = 0; i + 1 < m->npoints; i += 2, k++)
                m->points[k] = m->points[i + 1].rss > m->points[i].rss ? m->points[i + 1]
                                                                       : m->points[i];
            m->npoints = k;
        } else {
            mem_point *bigger = sonde_grow(m->points, &m->points_cap, m->npoints + 1,
                                           sizeof *bigger, MEM_MAX_POINTS);
            if (!bigger)
                return;
            m->points = bigger;
        }
    }
    m->points[m->npoints++] = (mem_point){ .ns = ns, .rss = rss, .heap = m->heap,
                                           .reserved = m->reserved };
}

/* The timeline thread's own readings leave the churn trigger alone: a
 * line still gets its reading after the bytes it allocated were touched. */
void mem_read_rss(mem_data *m, int churned)
{
    uint64_t ns = sonde_clock_ns(), rss = read_statm(m);
    store(&m->rss, rss);
    m->rss_ns = ns;
    if (rss > m->rss_most)
        m->rss_most = rss;
    if (churned)
        store(&m->churn_at_read, m->churn);
    add_point(m, ns, rss);
}

/* The touched part of the mappings, read again (lock held). */
static void measure_mappings(mem_data *m)
{
    int64_t change = mem_mapped_measure(&m->mapped, m->page_size);
    store(&m->heap, (uint64_t)((int64_t)m->heap + change));
    m->reserved = (uint64_t)((int64_t)m->reserved - change);
    if (m->heap > m->heap_peak)
        m->heap_peak = m->heap;
}

void mem_refresh_rss(mem_data *m)
{
    mem_lock(m);
    mem_read_rss(m, 1);
    mem_unlock(m);
}

/* ---- the hooks' slow paths ---- */

/* Counts an allocation of `weight` bytes standing for `objects` at stack
 * node n (lock held); a node the table cannot grow to is left uncounted,
 * as the stacks are when they cannot grow. */
static void count_alloc(mem_data *m, uint32_t n, uint64_t weight, double objects)
{
    if (n >= m->allocs_cap) {
        size_t had = m->allocs_cap;
        mem_node_alloc *bigger = sonde_grow(m->allocs, &m->allocs_cap, (size_t)n + 1,
                                            sizeof *bigger, UINT32_MAX);
        if (!bigger)
            return;
        memset(bigger + had, 0, (m->allocs_cap - had) * sizeof *bigger);
        m->allocs = bigger;
    }
    m->allocs[n].bytes += weight;
    m->allocs[n].objects += objects;
}

/* Starts following the block at p, of `weight` bytes standing for
 * `objects` allocations (lock held): on the heap (a mapping: among the
 * reserved bytes until touched), on the lines and stack that allocated
 * it. */
static void follow(mem_data *m, void *p, uint64_t weight, double objects, enum mem_kind kind)
{
    sonde_livemap_entry e = { .addr = (uint64_t)(uintptr_t)p, .bytes = weight, .node = m->root,
                              .kind = kind, .objects = objects };
    uint64_t heap = kind == MEM_MAPPED ? 0 : weight; /* what it adds to the heap */
    store(&m->heap, m->heap + heap);
    if (m->heap > m->heap_peak)
        m->heap_peak = m->heap;
    /* a mapping too: RSS is read as it comes, before its pages are touched */
    store(&m->churn, m->churn + weight);
    m->samples++;
    e.node = mem_place_alloc(m, weight);
    count_alloc(m, e.node, weight, objects);
    if (kind == MEM_MAPPED && mem_mapped_add(&m->mapped, e.addr, weight, e.node) < 0) {
        e.kind = MEM_NATIVE; /* too many mappings: plain heap */
        heap = weight;
        store(&m->heap, m->heap + heap);
    }
    if (sonde_livemap_put(&m->live, &e) < 0) {
        m->untracked += weight;
        store(&m->heap, m->heap - heap);
        if (e.kind == MEM_MAPPED)
            mem_mapped_take(&m->mapped, e.addr, &(mem_mapping){ 0 });
    } else {
        if (e.kind == MEM_MAPPED)
            m->reserved += weight;
        mem_tls_fresh = (uintptr_t)p;
    }
    mem_thread_allocated(m, weight);
}

void mem_sampled_alloc(void *p, size_t size, enum mem_kind kind)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m)
        return;
    mem_tls_busy++;
    uint64_t generation = __atomic_load_n(&mem_generation, __ATOMIC_RELAXED);
    if (tls_generation != generation) {
        /* A thread new to this recording: its first countdown. */
        tls_generation = generation;
        tls_random = first_state(m);
        mem_tls_countdown = draw(m->sample_bytes) - (int64_t)size;
        if (mem_tls_countdown > 0 && size < m->large_bytes)
            goto out;
    }
    uint64_t weight = mem_weight(m, size);
    if (size < m->large_bytes || mem_tls_countdown <= 0)
        mem_tls_countdown = draw(m->sample_bytes);
    if (!p || !size)
        goto out;
    pthread_mutex_lock(&m->lock);
    if (mem_active == m)
        follow(m, p, weight, (double)weight / (double)size, kind);
    pthread_mutex_unlock(&m->lock);
out:
    mem_tls_busy--;
}

void mem_mapping_made(void *p, size_t len)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m)
        return;
    mem_lock(m);
    if (mem_active == m)
        follow(m, p, len, 1, MEM_MAPPED);
    mem_unlock(m);
}

/* The followed block at p leaves the books: released (forget = 0), or
 * taken back as if it had never been allocated (forget = 1). */
static void drop_followed(void *p, int forget)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m)
        return;
    mem_lock(m);
    sonde_livemap_entry e;
    if (mem_active == m && sonde_livemap_take(&m->live, (uint64_t)(uintptr_t)p, &e)) {
        if (!forget && e.bytes >= MEM_BIG_RELEASE)
            mem_read_rss(m, 1);
        mem_mapping mp;
        if (e.kind == MEM_MAPPED && mem_mapped_take(&m->mapped, e.addr, &mp)) {
            store(&m->heap, m->heap - mp.touched);
            m->reserved -= mp.len - mp.touched;
        } else {
            store(&m->heap, m->heap - e.bytes);
        }
        store(&m->churn, forget ? m->churn - e.bytes : m->churn + e.bytes);
        mem_place_release(m, e.bytes, forget ? MEM_FORGOTTEN : MEM_RELEASED);
        if (forget && e.node < m->allocs_cap) { /* never allocated, after all */
            mem_node_alloc *a = &m->allocs[e.node];
            a->bytes -= a->bytes < e.bytes ? a->bytes : e.bytes;
            a->objects = a->objects > e.objects ? a->objects - e.objects : 0;
        }
        if (!forget) {
            mem_tls_released = (uintptr_t)p;
            tls_released_entry = e;
        }
    }
    mem_unlock(m);
}

void mem_followed_release(void *p) { drop_followed(p, 0); }

void mem_followed_reused(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (!m)
        return;
    mem_lock(m);
    sonde_livemap_entry e;
    if (mem_active == m && sonde_livemap_take(&m->live, (uint64_t)(uintptr_t)p, &e)) {
        uint32_t node = e.kind == MEM_MAPPED ? e.node : mem_place_again(m, e.bytes, e.node);
        if (node != e.node) {
            count_alloc(m, node, e.bytes, e.objects);
            mem_thread_allocated(m, e.bytes);
            e.node = node;
        }
        if (sonde_livemap_put(&m->live, &e) < 0) { /* as follow() leaves a block it cannot keep */
            m->untracked += e.bytes;
            store(&m->heap, m->heap - e.bytes);
        }
    }
    mem_unlock(m);
}
static void unfollow(void *p) { drop_followed(p, 1); }

void mem_restore(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    mem_tls_released = 0;
    if (!m)
        return;
    mem_lock(m);
    sonde_livemap_entry e = tls_released_entry;
    e.kind = e.kind == MEM_MAPPED ? MEM_NATIVE : e.kind; /* realloc's blocks are not mappings */
    if (mem_active == m && e.addr == (uint64_t)(uintptr_t)p &&
        sonde_livemap_put(&m->live, &e) == 0) {
        store(&m->heap, m->heap + e.bytes);
        store(&m->churn, m->churn - e.bytes);
        mem_place_release(m, e.bytes, MEM_RESTORED);
    }
    mem_unlock(m);
}

/* ---- what the line tracer's events say (mem.h) ---- */

void mem_busy_begin(void) { mem_tls_busy++; }
void mem_busy_end(void) { mem_tls_busy--; }
void mem_event(void) { mem_tls_fresh = 0; }

void mem_forget(void *p)
{
    mem_data *m = __atomic_load_n(&mem_active, __ATOMIC_ACQUIRE);
    if (m && p && sonde_livemap_maybe(&m->live, p))
        unfollow(p);
}

void mem_forget_fresh(void *p)
{
    if (mem_tls_fresh == (uintptr_t)p)
        mem_forget(p);
    mem_tls_fresh = 0;
}

/* ---- the timeline thread ---- */

static void *timeline_main(void *arg)
{
    mem_data *m = arg;
    mem_frame frames[MEM_MAX_FRAMES]; /* the recording thread's, each interval */
    mem_tls_busy = 1; /* its own allocations are not the program's */
    pthread_setname_np(pthread_self(), "sonde-timeline"); /* as top -H and /proc show it */
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&m->lock);
    m->timeline_started = 1;
    pthread_cond_broadcast(&m->wake);
    while (m->timeline_running) {
        uint64_t ns = (uint64_t)next.tv_nsec + m->interval_ns;
        next.tv_sec += (time_t)(ns / 1000000000u);
        next.tv_nsec = (long)(ns % 1000000000u);
        int rc = 0;
        while (m->timeline_running && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&m->wake, &m->lock, &next);
        if (m->timeline_running) {
            measure_mappings(m);
            mem_read_rss(m, 0);
        }
        if (m->timeline_running && !m->line_events && m->host.recorder_frames) {
            pthread_mutex_unlock(&m->lock); /* the allocating threads go on meanwhile */
            int n = m->host.recorder_frames(frames, MEM_MAX_FRAMES);
            pthread_mutex_lock(&m->lock);
            if (m->timeline_running)
                mem_spans_of_recorder(m, frames, n);
        }
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* The lock and the timeline's condition variable, new. */
static void init_sync(mem_data *m)
{
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->wake, &attr);
    pthread_condattr_destroy(&attr);
}

/* The allocating stacks, empty but for their root.  0, or -1 on out of
 * memory. */
static int init_stacks(mem_data *m)
{
    int64_t root = -1;
    if (sonde_profile_init(&m->stacks) < 0 ||
        (root = sonde_profile_add_thread(&m->stacks, 0, 0, "all threads")) < 0)
        return -1;
    m->root = m->stacks.threads[root].root;
    return 0;
}

/* Starts the timeline thread, which takes no signals (Ctrl-C is the
 * program's), and returns once it runs: a fork from then on finds it
 * waiting or holding the lock, never inside its own start-up, where an
 * allocator without fork handlers (AddressSanitizer's) may hold a lock
 * that the child would then wait on forever. */
static void start_timeline(mem_data *m)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    m->timeline_running = 1;
    m->timeline_started = 0;
    if (pthread_create(&m->timeline, NULL, timeline_main, m) != 0)
        m->timeline_running = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&m->lock);
    while (m->timeline_running && !m->timeline_started)
        pthread_cond_wait(&m->wake, &m->lock);
    pthread_mutex_unlock(&m->lock);
}

/* ---- fork ---- */

static void before_fork(void)
{
    mem_data *m = mem_active;
    if (m)
        pthread_mutex_lock(&m->lock);
}

static void after_fork_parent(void)
{
    mem_data *m = mem_active;
    if (m)
        pthread_mutex_unlock(&m->lock);
}

/* The child records nothing: its memory is not the parent's, and its
 * copy of the timeline thread does not exist.  That thread was waiting on
 * `wake` when fork copied it, so the child's copy of the condition
 * variable counts a waiter that will never leave: destroying or
 * signalling it would block forever.  The books are marked inherited and
 * left as they are. */
static void after_fork_child(void)
{
    mem_data *m = mem_active;
    if (m) {
        pthread_mutex_unlock(&m->lock);
        m->timeline_running = 0;
        m->inherited = 1;
        __atomic_store_n(&mem_active, NULL, __ATOMIC_RELEASE);
    }
}

/* ---- life cycle ---- */

mem_data *mem_data_new(uint64_t sample_bytes, uint64_t interval_ns, int line_events,
                       const mem_host *host, uint64_t seed)
{
    static int atfork_done; /* the handlers stay for the process's life; one caller at a
                               time (the GIL, or a test's only thread) */
    if (!atfork_done && pthread_atfork(before_fork, after_fork_parent, after_fork_child) == 0)
        atfork_done = 1;
    mem_data *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->sample_bytes = sample_bytes;
    m->large_bytes = sample_bytes * 16;
    m->interval_ns = interval_ns;
    m->line_events = line_events;
    m->seed = seed;
    m->host = *host;
    m->statm_fd = -1;
    sonde_livemap_init(&m->live);
    sonde_u64map_init(&m->line_at);
    sonde_u64map_init(&m->site_of);
    init_sync(m);
    if (init_stacks(m) < 0) {
        mem_data_free(m);
        return NULL;
    }
    return m;
}

void mem_data_free(mem_data *m)
{
    if (!m)
        return;
    sonde_livemap_free(&m->live);
    mem_mapped_free(&m->mapped);
    sonde_u64map_free(&m->line_at);
    sonde_u64map_free(&m->site_of);
    sonde_profile_free(&m->stacks);
    free(m->allocs);
    mem_sites_free(m);
    free(m->points);
    free(m->spans);
    if (!m->inherited) {
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->wake);
    }
    free(m);
}

/* The kernel's high-water mark of this process's RSS (VmHWM), in bytes. */
static uint64_t rss_high_water(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

int mem_account_start(mem_data *m)
{
    m->page_size = sysconf(_SC_PAGESIZE);
    m->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (m->statm_fd < 0)
        return -1;
    m->start_ns = sonde_clock_ns();
    void *reserve = mmap(NULL, MEM_RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1, 0);
    m->reserve = reserve == MAP_FAILED ? NULL : reserve;
    pthread_mutex_lock(&m->lock);
    mem_read_rss(m, 1);
    m->rss_attributed = m->rss;
    pthread_mutex_unlock(&m->lock);
    __atomic_store_n(&mem_generation, mem_generation + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&mem_active, m, __ATOMIC_RELEASE);
    start_timeline(m);
    return 0;
}

int mem_account_forked(mem_data *m)
{
    if (!m->inherited)
        return 0; /* it was not recording at the fork */
    init_sync(m); /* the copies' state is the parent's: unusable here */
    m->inherited = 0;
    if (m->statm_fd >= 0)
        close(m->statm_fd); /* the parent's figures */
    m->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (m->statm_fd < 0)
        return -1;
    sonde_livemap_free(&m->live);
    sonde_livemap_init(&m->live);
    mem_mapped_free(&m->mapped);
    memset(&m->mapped, 0, sizeof m->mapped);
    sonde_profile_free(&m->stacks);
    free(m->allocs);
    m->allocs = NULL;
    m->allocs_cap = 0;
    if (init_stacks(m) < 0)
        return -1;
    m->heap = m->heap_peak = m->reserved = m->churn = m->churn_at_read = m->rss_most = 0;
    m->untracked = m->samples = 0;
    m->npoints = m->nspans = 0;
    m->spans_dropped = 0;
    m->start_ns = sonde_clock_ns();
    mem_tls_fresh = mem_tls_released = 0; /* blocks of the parent's books */
    mem_read_rss(m, 1);
    m->rss_attributed = m->rss;
    mem_sites_forked(m);
    __atomic_store_n(&mem_active, m, __ATOMIC_RELEASE);
    start_timeline(m);
    return 0;
}

void mem_account_stop(mem_data *m)
{
    mem_sites_unwind(m);
    pthread_mutex_lock(&m->lock);
    int joinable = m->timeline_running;
    m->timeline_running = 0;
    __atomic_store_n(&mem_active, NULL, __ATOMIC_RELEASE);
    if (!m->inherited)
        pthread_cond_broadcast(&m->wake);
    measure_mappings(m);
    mem_read_rss(m, 1);
    mem_sites_rss_read(m); /* the change since the last reading, to its lines */
    pthread_mutex_unlock(&m->lock);
    if (joinable)
        pthread_join(m->timeline, NULL);
    /* the kernel raises its mark lazily (per-thread counters folded in
     * later): a reading of statm can be above it */
    m->rss_high_water = rss_high_water();
    if (m->rss_most > m->rss_high_water)
        m->rss_high_water = m->rss_most;
    if (m->statm_fd >= 0)
        close(m->statm_fd);
    m->statm_fd = -1;
    if (m->reserve)
        munmap(m->reserve, MEM_RESERVE);
    m->reserve = NULL;
    uint64_t stop = sonde_clock_ns();
    for (uint32_t i = 0; i < m->nspans; i++)
        if (m->spans[i].end == 0)
            m->spans[i].end = stop;
}
