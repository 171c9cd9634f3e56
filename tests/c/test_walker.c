/* test_walker.c - the stack walker on garbage memory (no crash, no hang)
 * and on stacks built by hand (the depth cap, truncation, loops); the
 * asyncio task reader on garbage too.
 *
 * The walker reads this test's own process, with _PyRuntime pointed at a
 * buffer of random words, most of them pointers back into the buffer, so
 * that every chain it follows (interpreters, thread states, frames, code
 * objects, strings, line tables) is garbage that loops, overlaps and
 * claims huge lengths.  Each snapshot must end, and every sample it
 * returns must stay within the walker's own bounds. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/profile.h"
#include "harness.h"
#include "sampler/asyncio_sets.h"
#include "sampler/asyncio_tasks.h"
#include "sampler/python/attr.h"
#include "sampler/python/linetable.h"
#include "sampler/thread_filter.h"
#include "sampler/walker.h"

#define ARENA_WORDS 4096

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random words: most point at a word inside the arena (so chains go on),
 * the rest are values of every size (lengths, counts, line numbers). */
static void scramble(uint64_t *arena)
{
    for (size_t i = 0; i < ARENA_WORDS; i++) {
        uint64_t r = next_random();
        arena[i] = r % 8 ? (uint64_t)(uintptr_t)(arena + (r >> 8) % (ARENA_WORDS - 64))
                         : next_random() >> (r % 64);
    }
}

static void walk_garbage(const sonde_py_layout *layout, uint64_t *arena, int rounds)
{
    sonde_profile p;
    sonde_profile_init(&p);
    sonde_walker w;
    check(sonde_walker_init(&w, &p) == 0, "walker init");
    w.proc.pid = getpid();
    w.layout = *layout;
    w.runtime.addr = (uint64_t)(uintptr_t)arena;
    sonde_thread_sample *out = malloc(8 * sizeof *out);
    int sane = 1;
    uint64_t threads = 0, frames = 0;
    for (int r = 0; r < rounds; r++) {
        scramble(arena);
        uint32_t n = 0;
        int rc = sonde_walker_sample(&w, &(uint64_t){ 0 }, out, 8, &n);
        sane &= rc <= 0 && n <= 8;
        threads += n;
        for (uint32_t i = 0; i < n; i++) {
            frames += out[i].depth;
            sane &= out[i].depth <= SONDE_WALK_MAX_DEPTH;
            for (uint32_t k = 0; k < out[i].depth; k++)
                sane &= out[i].frames[k].func < p.nfuncs;
        }
    }
    check(sane, "Python %d.%d: %d garbage snapshots stay in bounds", (int)layout->major,
          (int)layout->minor, rounds);
    /* The garbage must lead the walker deep, or the test proves little. */
    check(threads > 100, "Python %d.%d: garbage thread lists walked (%llu threads)",
          (int)layout->major, (int)layout->minor, (unsigned long long)threads);
    free(out);
    sonde_walker_close(&w);
    sonde_profile_free(&p);
}

static int read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
    return sonde_proc_read(ctx, addr, buf, len);
}

/* Attribute lookups through garbage objects, types and dicts. */
static void attrs_of_garbage(const sonde_py_layout *layout, uint64_t *arena, int rounds)
{
    sonde_proc self = { .pid = getpid() };
    int found = 0;
    for (int r = 0; r < rounds; r++) {
        scramble(arena);
        uint64_t value;
        uint64_t obj = (uint64_t)(uintptr_t)(arena + 64 + next_random() % (ARENA_WORDS - 128));
        found += sonde_py_attr(layout, read_self, &self, obj, "_name", &value) == 0;
    }
    /* No crash or hang is the point; a garbage "_name" key is not expected. */
    check(found == 0, "Python %d.%d: %d garbage attribute lookups end, none found",
          (int)layout->major, (int)layout->minor, rounds);
}

/* Whether a task graph read from garbage keeps within its bounds and names known functions. */
static int graph_in_bounds(const sonde_async_graph *g, const sonde_profile *p)
{
    int sane = g->ntasks <= SONDE_ASYNC_MAX_TASKS;
    for (uint32_t i = 0; i < g->ntasks; i++) {
        const sonde_async_task *t = &g->tasks[i];
        sane &= t->nframes <= SONDE_ASYNC_MAX_CHAIN && t->first_frame + t->nframes <= g->nframes &&
                t->first_waiter + t->nwaiters <= g->nwaiters;
    }
    for (uint32_t k = 0; k < g->nframes; k++)
        sane &= g->frames[k].func < p->nfuncs;
    return sane;
}

/* The same of a stack that sonde_async_reroot went on from its first frame. */
static int chain_in_bounds(const sonde_thread_sample *s, const sonde_profile *p)
{
    int sane = s->depth <= SONDE_WALK_MAX_DEPTH;
    for (uint32_t k = 1; k < s->depth && sane; k++)
        sane &= s->frames[k].func < p->nfuncs;
    return sane;
}

/* The asyncio task graph (dump --async) and a running task's chain (record --async) read
 * through garbage: task lists, coroutines, awaiter sets and names that loop and lie.  The
 * offsets are 3.14's own (its _asyncio section's words); the objects' are its headers'. */
static void tasks_of_garbage(uint64_t *arena, int rounds)
{
    static const uint64_t offsets_314[SONDE_ASYNC_OFFSETS] = {
        168, 136, 96, 108, 109, 128, 152, 225864, 10880, 936, 864, 872, 880,
    };
    sonde_py_layout layout = *sonde_py_layout_for(3, 12);
    layout.task_lists = 1;
    layout.frame_code_tag_bits = 3;
    layout.frame_stackpointer = 64;
    layout.gen_iframe = 72;
    layout.gen_frame_state = 67;
    layout.gen_awaiting_state = layout.gen_awaiting_state_2 = 255;
    layout.gen_awaited_slot = 1;
    layout.set_used = 24;
    layout.set_table = 40;
    layout.set_mask = 32;
    layout.long_tag = 16;
    layout.long_digit = 24;
    sonde_profile p;
    sonde_profile_init(&p);
    sonde_walker w;
    check(sonde_walker_init(&w, &p) == 0, "walker init");
    w.proc.pid = getpid();
    w.layout = layout;
    w.async_found = 1;
    memcpy(w.async_off, offsets_314, sizeof offsets_314);
    sonde_thread_sample *s = malloc(sizeof *s);
    int sane = 1;
    uint64_t tasks = 0, chained = 0;
    char err[256];
    for (int r = 0; r < rounds; r++) {
        scramble(arena);
        sonde_async_thread thread = { (uint64_t)(uintptr_t)(arena + next_random() % 64), 0 };
        w.interp = (uint64_t)(uintptr_t)(arena + next_random() % 64);
        sonde_async_graph g;
        sane &= sonde_async_read(&w, &thread, 1, &g, err, sizeof err) == 0;
        sane &= graph_in_bounds(&g, &p);
        tasks += g.ntasks;
        sonde_async_free(&g);
        memset(s, 0, sizeof *s);
        s->running_task = arena[next_random() % ARENA_WORDS];
        s->depth = s->task_depth = 1;
        sonde_async_reroot(&w, s);
        sane &= chain_in_bounds(s, &p);
        chained += s->depth > 1;
    }
    check(sane, "%d garbage task graphs and task chains stay in bounds", rounds);
    check(tasks > 100 && chained > 10, "garbage task lists walked (%llu tasks, %llu chains)",
          (unsigned long long)tasks, (unsigned long long)chained);
    free(s);
    sonde_walker_close(&w);
    sonde_profile_free(&p);
}

/* Plants a type object named name at word `at` of the arena (its name at word at + 8) and
 * makes about one word in `one_in` of the rest point to it: objects of that type. */
static void plant_type(uint64_t *arena, size_t at, const char *name, unsigned one_in)
{
    uint64_t type = (uint64_t)(uintptr_t)(arena + at);
    memset(arena + at + 8, 0, 32);
    memcpy(arena + at + 8, name, strlen(name));
    arena[at + 3] = (uint64_t)(uintptr_t)(arena + at + 8); /* tp_name */
    for (size_t i = 256; i < ARENA_WORDS; i++)
        if (next_random() % one_in == 0)
            arena[i] = type;
}

/* The tasks of 3.13 and earlier (asyncio_sets.h) read through garbage: sets, weak references,
 * tasks, gathers, coroutines and frames that loop and lie, with types named as asyncio's so
 * that the garbage leads deep. */
static void set_tasks_of_garbage(uint64_t *arena, int rounds)
{
    sonde_profile p;
    sonde_profile_init(&p);
    sonde_walker w;
    check(sonde_walker_init(&w, &p) == 0, "walker init");
    w.proc.pid = getpid();
    w.layout = *sonde_py_layout_for(3, 12);
    w.async_found = 1;
    sonde_thread_sample *s = malloc(sizeof *s);
    int sane = 1;
    uint64_t tasks = 0, waiting = 0, chained = 0;
    char err[256];
    for (int r = 0; r < rounds; r++) {
        scramble(arena);
        plant_type(arena, 64, "_asyncio.Task", 4);
        plant_type(arena, 128, "_GatheringFuture", 16);
        plant_type(arena, 192, "coroutine", 16);
        for (int k = 0; k < 3; k++) {
            size_t set = 256 + next_random() % (ARENA_WORDS - 512);
            w.async_sets[k] = (uint64_t)(uintptr_t)(arena + set);
            arena[set + 4] = ((uint64_t)1 << (next_random() % 9)) - 1; /* a set's mask */
        }
        sonde_async_thread thread = {
            (uint64_t)(uintptr_t)(arena + next_random() % 64),
            (uint64_t)(uintptr_t)(arena + next_random() % (ARENA_WORDS - 64)),
        };
        sonde_async_graph g;
        sane &= sonde_async_read(&w, &thread, 1, &g, err, sizeof err) == 0;
        sane &= graph_in_bounds(&g, &p);
        tasks += g.ntasks;
        waiting += g.nwaiters;
        uint64_t running = g.ntasks ? g.tasks[next_random() % g.ntasks].addr : 0;
        sonde_async_free(&g);
        sonde_async_sets_current(&w);
        sane &= w.async_ncurrent <= SONDE_ASYNC_CURRENT_MAX;
        memset(s, 0, sizeof *s);
        s->running_task = running; /* a task of the sets, most often */
        s->depth = s->task_depth = 1;
        sonde_async_reroot(&w, s);
        sane &= chain_in_bounds(s, &p);
        chained += s->depth > 1;
    }
    check(sane, "%d garbage task sets and task chains stay in bounds", rounds);
    check(tasks > 100 && waiting > 10 && chained > 10,
          "garbage task sets walked (%llu tasks, %llu awaiters, %llu chains)",
          (unsigned long long)tasks, (unsigned long long)waiting, (unsigned long long)chained);
    free(s);
    sonde_walker_close(&w);
    sonde_profile_free(&p);
}

/* ---- a stack built by hand: depth cap, truncation, loops ---- */

/* A 3.10-shaped process image inside this process: _PyRuntime ->
 * interpreter -> one thread state -> `depth` frames of one code object
 * ("f" in "t.py", first line 7), the frame at index loop_from pointing
 * back to the one at loop_to when loop_from >= 0.  Objects sit at fixed
 * words of one zeroed block, frames after them. */
enum { W_FILE = 0, W_NAME = 16, W_TABLE = 32, W_CODE = 48, W_TS = 64, W_INTERP = 96,
       W_RUNTIME = 112, W_FRAMES = 256, FRAME_WORDS = 16 };

typedef struct fake_stack {
    uint64_t *words;
} fake_stack;

static uint64_t at(const fake_stack *f, size_t word) { return (uint64_t)(uintptr_t)(f->words + word); }

static uint64_t frame_at(const fake_stack *f, uint32_t i)
{
    return at(f, W_FRAMES + (size_t)i * FRAME_WORDS);
}

static void put64(uint64_t addr, uint64_t off, uint64_t v)
{
    memcpy((char *)(uintptr_t)addr + off, &v, sizeof v);
}

static void put_str(const sonde_py_layout *l, uint64_t addr, const char *text)
{
    uint32_t state = 1u << l->str_kind_shift | 1u << l->str_compact_bit | 1u << l->str_ascii_bit;
    put64(addr, l->str_length, strlen(text));
    memcpy((char *)(uintptr_t)addr + l->str_state, &state, sizeof state);
    memcpy((char *)(uintptr_t)addr + l->str_ascii_size, text, strlen(text));
}

static void build_stack(fake_stack *f, const sonde_py_layout *l, uint32_t depth, long loop_from,
                        long loop_to)
{
    f->words = calloc(W_FRAMES + (size_t)depth * FRAME_WORDS, sizeof *f->words);
    uint64_t code = at(f, W_CODE), ts = at(f, W_TS), interp = at(f, W_INTERP);
    put_str(l, at(f, W_FILE), "t.py");
    put_str(l, at(f, W_NAME), "f");
    put64(at(f, W_TABLE), l->bytes_size, 0); /* an empty line table: the first line */
    put64(code, l->code_filename, at(f, W_FILE));
    put64(code, l->code_name, at(f, W_NAME));
    put64(code, l->code_linetable, at(f, W_TABLE));
    int32_t first = 7;
    memcpy((char *)(uintptr_t)code + l->code_firstlineno, &first, sizeof first);
    put64(at(f, W_RUNTIME), l->rt_interpreters_head, interp);
    put64(interp, l->interp_threads_head, ts);
    put64(ts, l->ts_frame, depth ? frame_at(f, 0) : 0);
    put64(ts, l->ts_thread_id, 1);
    for (uint32_t i = 0; i < depth; i++) {
        uint64_t previous = i + 1 < depth ? frame_at(f, i + 1) : 0;
        if (loop_from >= 0 && i == (uint32_t)loop_from)
            previous = frame_at(f, (uint32_t)loop_to);
        put64(frame_at(f, i), l->frame_previous, previous);
        put64(frame_at(f, i), l->frame_code, code);
    }
}

/* A walker (and the profile it names functions in) reading the built
 * stack f of layout l in this process. */
static void walker_on(sonde_walker *w, sonde_profile *p, const fake_stack *f,
                      const sonde_py_layout *l)
{
    sonde_profile_init(p);
    check(sonde_walker_init(w, p) == 0, "walker init");
    w->proc.pid = getpid();
    w->layout = *l;
    w->runtime.addr = at(f, W_RUNTIME);
}

static void walk_built(uint32_t depth, long loop_from, long loop_to, uint32_t want_depth,
                       int want_truncated, int want_torn)
{
    const sonde_py_layout *l = sonde_py_layout_for(3, 10);
    fake_stack f;
    build_stack(&f, l, depth, loop_from, loop_to);
    sonde_profile p;
    sonde_walker w;
    walker_on(&w, &p, &f, l);
    sonde_thread_sample *out = malloc(sizeof *out);
    uint32_t n = 0;
    int rc = sonde_walker_sample(&w, &(uint64_t){ 0 }, out, 1, &n);
    check(rc == 0 && n == 1, "%u frames: rc %d, %u threads", depth, rc, n);
    if (n == 1) {
        check(out->torn == want_torn, "%u frames (loop %ld->%ld): torn %d", depth, loop_from,
              loop_to, out->torn);
        if (!want_torn) {
            check(out->depth == want_depth && out->truncated == want_truncated,
                  "%u frames: depth %u truncated %d", depth, out->depth, out->truncated);
            int named = 1;
            for (uint32_t i = 0; i < out->depth; i++)
                named &= strcmp(sonde_profile_str(&p, p.funcs[out->frames[i].func].name), "f") == 0 &&
                         out->frames[i].line == 7;
            check(named, "%u frames: every frame is f at line 7", depth);
            check(out->outer_frame == (want_truncated ? 0 : frame_at(&f, depth - 1)),
                  "%u frames: the outermost frame", depth);
        }
    }
    free(out);
    sonde_walker_close(&w);
    sonde_profile_free(&p);
    free(f.words);
}

static void built_stacks(void)
{
    walk_built(10, -1, 0, 10, 0, 0);
    walk_built(SONDE_WALK_MAX_DEPTH, -1, 0, SONDE_WALK_MAX_DEPTH, 0, 0);   /* exactly the cap */
    walk_built(SONDE_WALK_MAX_DEPTH + 1, -1, 0, SONDE_WALK_MAX_DEPTH, 1, 0);
    walk_built(3000, -1, 0, SONDE_WALK_MAX_DEPTH, 1, 0);  /* once dropped whole */
    walk_built(40, 39, 39, 0, 0, 1);                       /* a frame that is its own caller */
    walk_built(40, 30, 5, 0, 0, 1);                        /* a loop of 26 frames */
    walk_built(3000, 2000, 1990, SONDE_WALK_MAX_DEPTH, 1, 0); /* a loop beyond the cap: unseen */
}

/* One sample of the built stack: its frames' function names and lines
 * into name/line (the innermost frame's), 0 when the walk failed. */
static int sample_top(sonde_walker *w, sonde_profile *p, const char **name, int32_t *line)
{
    sonde_thread_sample *out = malloc(sizeof *out);
    uint32_t n = 0;
    int ok = sonde_walker_sample(w, &(uint64_t){ 0 }, out, 1, &n) == 0 && n == 1 && !out->torn &&
             out->depth > 0;
    if (ok) {
        *name = sonde_profile_str(p, p->funcs[out->frames[0].func].name);
        *line = out->frames[0].line;
    }
    free(out);
    return ok;
}

/* A code object freed and another made at its address between two
 * samples (exec in a loop does it): the second sample names the new one,
 * and its line comes from its own line table, not from the line the
 * first one's table gave for the same instruction (lines are cached per
 * code object). */
static void code_replaced_at_its_address(void)
{
    const sonde_py_layout *l = sonde_py_layout_for(3, 10);
    fake_stack f;
    build_stack(&f, l, 12, -1, 0);
    const uint8_t table[] = { 100, 3 }; /* 3.10: the first 100 bytes lie 3 lines down */
    uint64_t tab = at(&f, W_TABLE), code = at(&f, W_CODE);
    put64(tab, l->bytes_size, sizeof table);
    memcpy((char *)(uintptr_t)tab + l->bytes_sval, table, sizeof table);
    int want_first, want_second;
    check(sonde_py_line_for((enum sonde_py_line_format)l->code_line_format, table, sizeof table,
                            7, 0, &want_first) == 0 &&
          sonde_py_line_for((enum sonde_py_line_format)l->code_line_format, table, sizeof table,
                            20, 0, &want_second) == 0 && want_first != want_second,
          "the table gives lines that depend on the first line");
    sonde_profile p;
    sonde_walker w;
    walker_on(&w, &p, &f, l);
    const char *name = NULL;
    int32_t line = 0;
    check(sample_top(&w, &p, &name, &line) && strcmp(name, "f") == 0 && line == want_first,
          "first code: f at line %d (%s %d)", want_first, name ? name : "-", line);
    int32_t first = 20;
    memcpy((char *)(uintptr_t)code + l->code_firstlineno, &first, sizeof first);
    put_str(l, at(&f, W_NAME), "g");
    check(sample_top(&w, &p, &name, &line) && strcmp(name, "g") == 0 && line == want_second,
          "the code made at its address: g at line %d (%s %d)", want_second, name ? name : "-",
          line);
    sonde_walker_close(&w);
    sonde_profile_free(&p);
    free(f.words);
}

/* --thread NAME: a thread whose stack is read cut at the cap has a name
 * that cannot be read yet (threading's is in the outermost frame), so it
 * stays undecided, to be decided when a whole stack shows it; a whole
 * stack without one is decided for good. */
static void filter_waits_for_a_whole_stack(uint32_t depth, int want_known)
{
    const sonde_py_layout *l = sonde_py_layout_for(3, 10);
    fake_stack f;
    build_stack(&f, l, depth, -1, 0);
    sonde_profile p;
    sonde_walker w;
    walker_on(&w, &p, &f, l);
    sonde_thread_filter filter;
    sonde_thread_filter_init(&filter);
    sonde_thread_filter_add(&filter, "worker");
    w.filter = &filter;
    sonde_thread_sample *out = malloc(sizeof *out);
    uint32_t n = 0;
    int rc = sonde_walker_sample(&w, &(uint64_t){ 0 }, out, 1, &n);
    check(rc == 0 && n == 1 && out->undecided, "%u frames: rc %d, %u threads, undecided", depth,
          rc, n);
    sonde_walker_decide_threads(&w, out, n);
    int known = sonde_thread_filter_known(&filter, sonde_thread_filter_key(at(&f, W_TS), 1, 0));
    check(n == 1 && out->filtered && known == want_known,
          "%u frames: filtered %d, decided %d (want %d)", depth, out->filtered, known, want_known);
    free(out);
    sonde_walker_close(&w);
    sonde_thread_filter_free(&filter);
    sonde_profile_free(&p);
    free(f.words);
}

/* A thread decided under its thread state, pthread and kernel id: a new
 * thread that reuses the first two (glibc and CPython do) is decided
 * anew, by its own name. */
static void filter_decides_a_reused_thread_state_anew(void)
{
    sonde_thread_filter filter;
    sonde_thread_filter_init(&filter);
    sonde_thread_filter_add(&filter, "worker");
    uint64_t first = sonde_thread_filter_key(0x7f0000001000, 0x7f0000200000, 4242);
    uint64_t reused = sonde_thread_filter_key(0x7f0000001000, 0x7f0000200000, 4250);
    check(sonde_thread_filter_decide(&filter, getpid(), first, 4242, "worker", 1) == 1,
          "the worker is kept");
    check(sonde_thread_filter_known(&filter, reused) == -1,
          "a thread reusing its state and pthread is not decided yet");
    check(sonde_thread_filter_decide(&filter, getpid(), reused, 4250, "other", 1) == 0,
          "and is left out by its own name");
    check(sonde_thread_filter_known(&filter, first) == 1, "the first decision stays");
    sonde_thread_filter_free(&filter);
}

void test_walker(void)
{
    built_stacks();
    code_replaced_at_its_address();
    filter_decides_a_reused_thread_state_anew();
    filter_waits_for_a_whole_stack(3000, -1);   /* cut: undecided (was: left out for good) */
    filter_waits_for_a_whole_stack(10, 0);      /* whole, and no thread name: left out */
    uint64_t *arena = malloc(ARENA_WORDS * sizeof *arena);
    for (int minor = 8; minor <= 12; minor++) {
        walk_garbage(sonde_py_layout_for(3, minor), arena, 300);
        attrs_of_garbage(sonde_py_layout_for(3, minor), arena, 300);
    }
    tasks_of_garbage(arena, 300);
    set_tasks_of_garbage(arena, 300);
    free(arena);
}
