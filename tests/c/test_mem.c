/* test_mem.c - sonde mem's accounting without Python (src/mem): sampled
 * weights sum to the true bytes (within the error the sample count
 * allows), a seed replays the draws, every block is followed exactly when
 * sampling is off and large blocks always are, the books (heap, lines,
 * leaks) follow allocations, releases, forgotten blocks and a failed
 * realloc's restore, line events give each line its thread's bytes
 * (callees and nested code included), a worker's bytes count on its
 * starter's lines too both ways, the timeline's readings of the
 * recording thread keep its functions' spans, and a forked child records nothing
 * unless followed, when it records its own from zero.
 *
 * The interpreter is a fake host: a stack of (code, offset) set by each
 * test, and a line per offset. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "core/clock.h"
#include "mem/account.h"

/* ---- the fake interpreter ---- */

static const char code_a[1], code_b[1]; /* two code objects: their addresses */
static mem_frame stack[4];              /* innermost first */
static int depth;

static int frames(mem_frame *out, int max)
{
    int n = depth < max ? depth : max;
    for (int i = 0; i < n; i++)
        out[i] = stack[i];
    return n;
}

/* Code unit k is on line 10 + k (lines 10.. of both codes). */
static int line_of(const void *code, int offset)
{
    (void)code;
    return 10 + offset / 2;
}

static const mem_host host = { .frames = frames, .line_of = line_of };

/* The stack of the thread that started the calling one (a worker's). */
static mem_frame starter[2];
static int starter_depth;

static int starter_frames(mem_frame *out, int max)
{
    int n = starter_depth < max ? starter_depth : max;
    for (int i = 0; i < n; i++)
        out[i] = starter[i];
    return n;
}

static const mem_host worker_host = { .frames = frames, .starter_frames = starter_frames,
                                      .line_of = line_of };

/* A block address that was never handed out: the books only key on it. */
static void *block(uint64_t i) { return (void *)(uintptr_t)(0x10000000ull + i * 64); }

static mem_data *start(uint64_t sample_bytes, int line_events, uint64_t seed)
{
    mem_data *m = mem_data_new(sample_bytes, 10 * 1000 * 1000, line_events, &host, seed);
    check(m != NULL, "mem_data_new");
    check(mem_account_start(m) == 0, "mem_account_start");
    return m;
}

static void stop(mem_data *m)
{
    mem_account_stop(m);
    mem_data_free(m);
}

/* ---- sampling ---- */

static void test_weights(void)
{
    mem_data *m = mem_data_new(512, 10000000, 0, &host, 1);
    /* size / (1 - exp(-size / 512)), rounded: the inverse of the chance
     * that a block of that size is sampled */
    check_u64(mem_weight(m, 512), 810);
    check_u64(mem_weight(m, 64), (uint64_t)(64 / -expm1(-64.0 / 512) + 0.5));
    check_u64(mem_weight(m, 1), 513); /* 512.5 */
    check_u64(mem_weight(m, 16 * 512), 16 * 512); /* large: always taken, exact */
    mem_data_free(m);
    m = mem_data_new(0, 10000000, 0, &host, 1);
    check_u64(mem_weight(m, 100), 100); /* sampling off */
    mem_data_free(m);
}

/* n blocks of `size` bytes at once, then the recording's figures. */
static void allocate(uint64_t n, size_t size)
{
    for (uint64_t i = 0; i < n; i++)
        mem_on_alloc(block(i), size, MEM_PYTHON);
}

static void test_unbiased(void)
{
    enum { N = 200000, SIZE = 64 };
    depth = 1;
    stack[0] = (mem_frame){ code_a, 4 }; /* line 12 */
    mem_data *m = start(512, 0, 42);
    uint32_t site = mem_site_add(m, code_a, "a.py", "work", 10, 5, NULL);
    allocate(N, SIZE);
    double truth = (double)N * SIZE, p = -expm1(-(double)SIZE / 512);
    /* ~23,500 samples: the sum's relative error is about 0.7%; 3% is
     * over four of those */
    check(fabs((double)m->heap - truth) < 0.03 * truth, "heap %llu, true bytes %.0f",
          (unsigned long long)m->heap, truth);
    check(fabs((double)m->samples - N * p) < 0.03 * N * p, "%llu samples, expected %.0f",
          (unsigned long long)m->samples, N * p);
    check_u64(m->sites[site]->lines[2].alloc, m->heap); /* every sample on line 12 */
    check_u64(m->sites[site]->lines[0].alloc, 0);
    /* The allocations they stand for: one node (line 12), about N. */
    uint32_t nallocs = 0, *allocs = mem_allocations(m, &nallocs);
    check(allocs && nallocs == 1, "one allocating stack, %u", nallocs);
    if (allocs && nallocs == 1) {
        check_u64(m->allocs[allocs[0]].bytes, m->heap);
        check(fabs(m->allocs[allocs[0]].objects - N) < 0.03 * N, "%.0f allocations, truly %d",
              m->allocs[allocs[0]].objects, N);
    }
    free(allocs);
    uint64_t heap = m->heap, samples = m->samples;
    stop(m);
    /* The same seed and allocations: the same draws. */
    m = start(512, 0, 42);
    mem_site_add(m, code_a, "a.py", "work", 10, 5, NULL);
    allocate(N, SIZE);
    check_u64(m->heap, heap);
    check_u64(m->samples, samples);
    stop(m);
    m = start(512, 0, 43);
    allocate(N, SIZE);
    check(m->samples != samples || m->heap != heap, "another seed, other draws");
    stop(m);
    depth = 0;
}

static void test_countdown(void)
{
    mem_data *m = start(0, 0, 1);
    allocate(1000, 24); /* sampling off: every block, exact */
    check_u64(m->samples, 1000);
    check_u64(m->heap, 24000);
    stop(m);
    m = start(512, 0, 1);
    for (uint64_t i = 0; i < 10; i++)
        mem_on_alloc(block(i), 16 * 512, MEM_NATIVE); /* large: always, exact */
    check_u64(m->samples, 10);
    check_u64(m->heap, 10 * 16 * 512);
    mem_tls_busy++; /* sonde's own allocations are not the program's */
    mem_on_alloc(block(10), 16 * 512, MEM_NATIVE);
    mem_tls_busy--;
    check_u64(m->samples, 10);
    stop(m);
}

/* ---- the books ---- */

static void test_books(void)
{
    depth = 1;
    stack[0] = (mem_frame){ code_a, 2 }; /* line 11 */
    mem_data *m = start(0, 0, 1);
    uint32_t site = mem_site_add(m, code_a, "a.py", "work", 10, 5, NULL);
    mem_line_figures *line = &m->sites[site]->lines[1];
    mem_on_alloc(block(1), 100, MEM_PYTHON);
    mem_on_alloc(block(2), 50, MEM_NATIVE);
    check_u64(m->heap, 150);
    check_u64(line->alloc, 150);
    mem_on_release(block(3)); /* never followed */
    check_u64(m->heap, 150);
    /* realloc of block 1 that fails: its release is taken back */
    mem_on_release_undoable(block(1));
    check_u64(m->heap, 50);
    check_u64(line->freed, 100);
    mem_on_restore(block(2)); /* not the release reported last: nothing */
    check_u64(m->heap, 50);
    mem_on_restore(block(1));
    check_u64(m->heap, 150);
    check_u64(line->freed, 0);
    mem_on_release(block(1)); /* and it can still be released */
    check_u64(m->heap, 50);
    check_u64(line->freed, 100);
    mem_forget(block(2)); /* made for sonde: as if never allocated */
    check_u64(m->heap, 0);
    uint32_t nallocs = 0, *allocs = mem_allocations(m, &nallocs);
    check(allocs && nallocs == 1 && m->allocs[allocs[0]].bytes == 100 &&
              m->allocs[allocs[0]].objects == 1,
          "allocated: block 1 (restored, released) counted once, block 2 taken back");
    free(allocs);
    mem_on_alloc(block(4), 70, MEM_NATIVE);
    check_u64(m->heap_peak, 150);
    stop(m);
    depth = 0;
}

static void test_leaks(void)
{
    depth = 2;
    stack[0] = (mem_frame){ code_b, 0 }; /* b line 10, called from a line 13 */
    stack[1] = (mem_frame){ code_a, 6 };
    mem_data *m = start(0, 0, 1);
    uint32_t a = mem_site_add(m, code_a, "a.py", "outer", 10, 5, NULL);
    uint32_t b = mem_site_add(m, code_b, "b.py", "inner", 10, 2, NULL);
    mem_on_alloc(block(1), 300, MEM_PYTHON);
    mem_on_alloc(block(2), 200, MEM_NATIVE);
    depth = 1; /* a line 13 itself */
    stack[0] = (mem_frame){ code_a, 6 };
    mem_on_alloc(block(3), 1000, MEM_PYTHON);
    mem_on_alloc(block(4), 5, MEM_PYTHON);
    mem_on_release(block(4));
    mem_account_stop(m);
    mem_node_bytes nb;
    check(mem_figures_net(m, &nb) == 0, "mem_figures_net");
    check_u64(m->sites[a]->lines[3].net, 1500); /* callees included */
    check_u64(m->sites[a]->lines[3].alloc, 1505);
    check_u64(m->sites[a]->lines[3].freed, 5);
    check_u64(m->sites[b]->lines[0].net, 500);
    uint32_t count = 0, *order = mem_leaks(m, &nb, &count);
    check_u64(count, 2);
    check_u64(nb.all[order[0]], 1000);
    check_u64(nb.all[order[1]], 500);
    check_u64(nb.native[order[1]], 200);
    int line = 0;
    const mem_site *s = mem_node_site(m, order[1], &line);
    check(s == m->sites[b] && line == 10, "the second leak is b's line 10");
    s = mem_node_site(m, m->stacks.nodes[order[1]].parent, &line);
    check(s == m->sites[a] && line == 13, "called from a's line 13");
    check(nb.objects[order[0]] == 1 && nb.objects[order[1]] == 2, "objects alive %.1f, %.1f",
          nb.objects[order[0]], nb.objects[order[1]]);
    free(order);
    /* What each stack allocated, released blocks included: a13 1005 bytes
     * in 2 blocks, then a13 -> b10 500 in 2. */
    order = mem_allocations(m, &count);
    check(order && count == 2, "two allocating stacks");
    if (order && count == 2) {
        check_u64(m->allocs[order[0]].bytes, 1005);
        check_u64(m->allocs[order[1]].bytes, 500);
        check(m->allocs[order[0]].objects == 2 && m->allocs[order[1]].objects == 2,
              "2 and 2 allocations: %.1f, %.1f", m->allocs[order[0]].objects,
              m->allocs[order[1]].objects);
        check(mem_node_site(m, order[1], &line) == m->sites[b] && line == 10, "b's line 10");
    }
    free(order);
    mem_node_bytes_free(&nb);
    mem_data_free(m);
    depth = 0;
}

/* ---- line events ---- */

static void test_line_events(void)
{
    mem_data *m = start(0, 1, 1);
    uint64_t hits[5] = { 0 };
    uint32_t site = mem_site_add(m, code_a, "a.py", "work", 10, 5, hits);
    mem_line_figures *lines = m->sites[site]->lines;
    check(mem_frame_enter(m, site) == 0, "mem_frame_enter");
    mem_line(m, 11);
    mem_on_alloc(block(1), 100, MEM_PYTHON);
    mem_line(m, 12);
    check_u64(lines[1].alloc, 100);
    mem_on_alloc(block(2), 40, MEM_PYTHON);
    check(mem_frame_enter(m, MEM_NESTED) == 0, "a comprehension on line 12");
    mem_line(m, 12);
    mem_on_alloc(block(3), 30, MEM_PYTHON);
    mem_forget(block(2)); /* made for sonde: taken back from the line */
    mem_frame_leave(m);
    mem_on_release(block(1));
    mem_line(m, -1);
    check_u64(lines[2].alloc, 30); /* 40 + 30, less the 40 forgotten */
    check_u64(lines[2].freed, 100);
    check(lines[2].peak_heap >= 130, "peak heap %llu", (unsigned long long)lines[2].peak_heap);
    mem_line(m, 13);
    mem_on_alloc(block(4), 8, MEM_PYTHON);
    mem_account_stop(m); /* the open line closes */
    check_u64(lines[3].alloc, 8);
    check_u64(m->nspans, 1);
    check(m->spans[0].site == site && m->spans[0].end >= m->spans[0].start, "one span");
    mem_node_bytes nb;
    check(mem_figures_net(m, &nb) == 0, "mem_figures_net");
    check_u64(lines[2].net, 30); /* the nested code's block is its line's */
    check_u64(lines[3].net, 8);
    mem_node_bytes_free(&nb);
    mem_data_free(m);
}

/* ---- workers ---- */

/* Net bytes of each line of site a (lines 10..14) and b, at the end. */
static void check_net(mem_data *m, uint64_t a12, uint64_t b11)
{
    mem_node_bytes nb;
    check(mem_figures_net(m, &nb) == 0, "mem_figures_net");
    check_u64(m->sites[0]->lines[2].net, a12);
    check_u64(m->sites[1]->lines[1].net, b11);
    mem_node_bytes_free(&nb);
}

/* The starter waits on a's line 12; the worker runs b (untraced, then on
 * its line 11).  Both ways, a's line gets every byte the worker
 * allocates, b's line those made while the worker is on it, and a block
 * made on b's line belongs to the stack a:12 -> b:11. */
static void test_workers(void)
{
    starter_depth = 1;
    starter[0] = (mem_frame){ code_a, 4 }; /* line 12 */
    for (int line_events = 0; line_events <= 1; line_events++) {
        mem_data *m = mem_data_new(0, 10 * 1000 * 1000, line_events, &worker_host, 1);
        check(m && mem_account_start(m) == 0, "start");
        mem_site_add(m, code_a, "a.py", "wait", 10, 5, NULL);
        mem_site_add(m, code_b, "b.py", "work", 10, 5, NULL);
        mem_line_figures *a12 = &m->sites[0]->lines[2], *b11 = &m->sites[1]->lines[1];
        depth = 0; /* outside any site */
        mem_on_alloc(block(1), 100, MEM_PYTHON);
        check_u64(a12->alloc, 100);
        depth = 1;
        stack[0] = (mem_frame){ code_b, 2 }; /* line 11 */
        if (line_events) {
            check(mem_frame_enter(m, 1) == 0, "mem_frame_enter");
            mem_line(m, 11);
        }
        mem_on_alloc(block(2), 40, MEM_NATIVE);
        mem_on_release(block(1));
        if (line_events)
            mem_line(m, -1); /* b's line closes with the worker's totals */
        check_u64(a12->alloc, 140);
        check_u64(a12->freed, 100);
        check_u64(b11->alloc, 40);
        check_u64(b11->freed, 100);
        mem_account_stop(m);
        check_net(m, 40, 40);
        uint32_t nallocs = 0, *allocs = mem_allocations(m, &nallocs);
        int stitched = 0;
        for (uint32_t i = 0; allocs && i < nallocs; i++) {
            const sonde_node *node = &m->stacks.nodes[allocs[i]];
            const sonde_node *parent = &m->stacks.nodes[node->parent];
            stitched |= m->allocs[allocs[i]].bytes == 40 && node->func == 1 && node->line == 11 &&
                        parent->func == 0 && parent->line == 12;
        }
        check(stitched, "block 2's stack is a:12 -> b:11 (line events: %d)", line_events);
        free(allocs);
        mem_data_free(m);
    }
    depth = starter_depth = 0;
}

/* ---- the recording thread's spans ---- */

/* What the timeline thread reads of the recording thread: its stack, set
 * under the accounting's lock. */
static mem_frame recorder[1];
static int recorder_depth;

static int recorder_frames(mem_frame *out, int max)
{
    int n = recorder_depth < max ? recorder_depth : max;
    for (int i = 0; i < n; i++)
        out[i] = recorder[i];
    return n;
}

static const mem_host recorder_host = { .frames = frames, .recorder_frames = recorder_frames,
                                        .line_of = line_of };

/* Waits (the lock held) until the timeline thread has read the recording
 * thread `more` times, and the clock is past `after`. */
static void wait_readings(mem_data *m, uint64_t more, uint64_t after)
{
    uint64_t until = m->readings + more;
    while (m->readings < until || sonde_clock_ns() <= after) {
        pthread_mutex_unlock(&m->lock);
        nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
        pthread_mutex_lock(&m->lock);
    }
}

/* From the stack, a function the recording thread runs without
 * allocating is seen running by the timeline's readings, in one span
 * however late they come, and in a new one after a reading found it gone
 * and two intervals passed. */
static void test_recorder_spans(void)
{
    const uint64_t interval = 1000 * 1000;
    mem_data *m = mem_data_new(0, interval, 0, &recorder_host, 1);
    check(m && mem_account_start(m) == 0, "start");
    mem_site_add(m, code_a, "a.py", "wait", 10, 5, NULL);
    pthread_mutex_lock(&m->lock);
    recorder[0] = (mem_frame){ code_a, 4 };
    recorder_depth = 1;
    wait_readings(m, 20, 0);
    check(m->nspans == 1, "one span while a runs (%u)", m->nspans);
    recorder_depth = 0;
    wait_readings(m, 1, m->spans[0].end + 3 * interval);
    recorder_depth = 1;
    wait_readings(m, 5, 0);
    pthread_mutex_unlock(&m->lock);
    mem_account_stop(m);
    check(m->nspans == 2 && m->spans[0].site == 0 && m->spans[1].site == 0, "two spans of a (%u)",
          m->nspans);
    check(m->spans[0].end > m->spans[0].start && m->spans[1].start > m->spans[0].end + 3 * interval &&
              m->spans[1].end > m->spans[1].start,
          "the spans are the readings that saw a: %llu-%llu, %llu-%llu",
          (unsigned long long)m->spans[0].start, (unsigned long long)m->spans[0].end,
          (unsigned long long)m->spans[1].start, (unsigned long long)m->spans[1].end);
    mem_data_free(m);
    recorder_depth = 0;
}

/* ---- fork ---- */

static void test_fork(void)
{
    mem_data *m = start(0, 0, 1);
    mem_on_alloc(block(1), 10, MEM_PYTHON);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child's copy records nothing, and keeps its hands off the
         * timeline thread's condition variable. */
        mem_on_alloc(block(2), 10, MEM_PYTHON);
        int why = mem_active ? 1 : !m->inherited ? 2 : m->timeline_running ? 3
                  : m->samples != 1 ? 4 : 0;
        mem_data_free(m); /* must not touch the condition variable */
        _exit(why);
    }
    int status = -1;
    check(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child's books are inherited (child's status %#x)", status);
    check(mem_active == m && !m->inherited, "the parent goes on");
    mem_on_alloc(block(3), 10, MEM_PYTHON);
    check_u64(m->samples, 2);
    stop(m);
}

/* A followed child (sonde mem --subprocesses): its books start empty at
 * the fork -- the parent's block is not its to release -- and it records
 * its own, with a timeline thread of its own that stops. */
static void test_fork_followed(void)
{
    mem_data *m = start(0, 0, 1);
    mem_on_alloc(block(1), 10, MEM_PYTHON);
    pid_t pid = fork();
    if (pid == 0) {
        int why = mem_account_forked(m) != 0 ? 1 : mem_active != m ? 2 : m->inherited ? 3
                  : m->samples != 0 || mem_heap(m) != 0 ? 4 : 0;
        if (!why) {
            mem_on_release(block(1)); /* the parent's: not in the child's books */
            mem_on_alloc(block(2), 30, MEM_PYTHON);
            why = m->samples != 1 ? 5 : mem_heap(m) != 30 ? 6 : !m->timeline_running ? 7 : 0;
        }
        if (!why) {
            mem_account_stop(m); /* joins the child's own timeline thread */
            mem_data_free(m);
        }
        _exit(why);
    }
    int status = -1;
    check(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the followed child's books start empty and go on (child's status %#x)", status);
    check_u64(m->samples, 1);
    check_u64(mem_heap(m), 10); /* the parent's books are its own */
    stop(m);
}

void test_mem_account(void)
{
    test_weights();
    test_unbiased();
    test_countdown();
    test_books();
    test_leaks();
    test_line_events();
    test_workers();
    test_recorder_spans();
    test_fork();
    test_fork_followed();
}
