/* test_u64map.c - the 64-bit key map: get, slot insertion, growth. */
#include "core/u64map.h"
#include "harness.h"

static void test_basics(void)
{
    sonde_u64map m;
    sonde_u64map_init(&m);
    check_u64(sonde_u64map_get(&m, 1), SONDE_U64MAP_NONE);

    uint32_t *v = sonde_u64map_slot(&m, 1, 7);
    check(v && *v == 7, "a new key takes the initial value");
    *v = 8;
    v = sonde_u64map_slot(&m, 1, 99);
    check(v && *v == 8, "an existing key keeps its value");
    check_u64(sonde_u64map_get(&m, 1), 8);

    /* Keys at the extremes are ordinary keys. */
    sonde_u64map_slot(&m, 0, 10);
    sonde_u64map_slot(&m, UINT64_MAX, 11);
    check_u64(sonde_u64map_get(&m, 0), 10);
    check_u64(sonde_u64map_get(&m, UINT64_MAX), 11);
    check_u64(sonde_u64map_get(&m, 2), SONDE_U64MAP_NONE);
    check_u64(m.count, 3);
    sonde_u64map_free(&m);
    check(m.count == 0 && m.nslots == 0, "free empties the map");
}

/* Packed (caller << 32 | callee) pairs, as stats use them, through growth. */
static void test_growth(void)
{
    enum { N = 10000 };
    sonde_u64map m;
    sonde_u64map_init(&m);
    for (uint32_t i = 0; i < N; i++)
        sonde_u64map_slot(&m, (uint64_t)i << 32 | (i % 7), i);
    int wrong = 0;
    for (uint32_t i = 0; i < N; i++)
        wrong += sonde_u64map_get(&m, (uint64_t)i << 32 | (i % 7)) != i;
    check_u64(wrong, 0);
    check_u64(m.count, N);
    check(m.nslots >= 2 * N, "kept at most half full (%u slots)", m.nslots);
    check_u64(sonde_u64map_get(&m, (uint64_t)N << 32), SONDE_U64MAP_NONE);
    sonde_u64map_free(&m);
}

void test_u64map(void)
{
    test_basics();
    test_growth();
}
