/* test_livemap.c - followed allocations by address: random puts and takes
 * against a plain array as the model, backward-shift deletion keeping
 * every other entry findable, and the counting filter never saying "no"
 * for an address in the map. */
#include <stdlib.h>

#include "core/livemap.h"
#include "harness.h"

enum { ADDRS = 20000, OPS = 200000 };

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_against_model(void)
{
    sonde_livemap *m = malloc(sizeof *m);
    uint64_t *model = calloc(ADDRS, sizeof *model); /* bytes, 0 = absent */
    sonde_livemap_init(m);
    int wrong = 0, filter_said_no = 0;
    for (int op = 0; op < OPS; op++) {
        uint32_t k = (uint32_t)(next_random() % ADDRS);
        uint64_t addr = 0x7f0000000000ull + (uint64_t)k * 48; /* malloc-like spacing */
        sonde_livemap_entry got;
        if (next_random() % 2) {
            sonde_livemap_entry e = { addr, 1 + next_random() % 4096, k, (uint32_t)(k % 2) };
            wrong += sonde_livemap_put(m, &e) != 0;
            model[k] = e.bytes;
        } else {
            int had = sonde_livemap_take(m, addr, &got);
            wrong += had != (model[k] != 0) || (had && (got.bytes != model[k] || got.node != k));
            model[k] = 0;
        }
    }
    uint64_t present = 0;
    for (uint32_t k = 0; k < ADDRS; k++) {
        uint64_t addr = 0x7f0000000000ull + (uint64_t)k * 48;
        present += model[k] != 0;
        filter_said_no += model[k] && !sonde_livemap_maybe(m, (void *)(uintptr_t)addr);
        sonde_livemap_entry got;
        int had = sonde_livemap_take(m, addr, &got);
        wrong += had != (model[k] != 0) || (had && got.bytes != model[k]);
    }
    check_u64(wrong, 0);
    check_u64(filter_said_no, 0);
    check_u64(m->count, 0);
    check(present > ADDRS / 4, "the walk left many entries to check (%llu)",
          (unsigned long long)present);
    /* Empty again: the filter is back to all zeros but for saturated cells. */
    uint64_t maybe = 0;
    for (uint32_t k = 0; k < ADDRS; k++)
        maybe += sonde_livemap_maybe(m, (void *)(uintptr_t)(0x7f0000000000ull + (uint64_t)k * 48));
    check_u64(maybe, 0);
    sonde_livemap_free(m);
    free(m);
    free(model);
}

static void test_replace_and_null(void)
{
    sonde_livemap *m = malloc(sizeof *m);
    sonde_livemap_init(m);
    sonde_livemap_entry e = { 0x1000, 10, 1, 0 }, got;
    sonde_livemap_put(m, &e);
    e.bytes = 20;
    sonde_livemap_put(m, &e);
    check_u64(m->count, 1);
    check(sonde_livemap_take(m, 0x1000, &got) && got.bytes == 20, "a put replaces");
    check(!sonde_livemap_take(m, 0x1000, &got), "taken once");
    sonde_livemap_entry null = { 0, 5, 0, 0 };
    check(sonde_livemap_put(m, &null) == 0 && m->count == 0, "NULL is never followed");
    check(!sonde_livemap_take(m, 0, &got), "nor found");
    sonde_livemap_free(m);
    free(m);
}

void test_livemap(void)
{
    test_against_model();
    test_replace_and_null();
}
