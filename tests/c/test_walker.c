/* test_walker.c - the stack walker on garbage memory: no crash, no hang.
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
#include "sampler/python/attr.h"
#include "sampler/walker.h"
#include "sampler_tests.h"

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
        int rc = sonde_walker_sample(&w, out, 8, &n);
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

void test_walker(void)
{
    uint64_t *arena = malloc(ARENA_WORDS * sizeof *arena);
    for (int minor = 8; minor <= 12; minor++) {
        walk_garbage(sonde_py_layout_for(3, minor), arena, 300);
        attrs_of_garbage(sonde_py_layout_for(3, minor), arena, 300);
    }
    free(arena);
}
