/* test_grow.c - the one array-growth helper: doubling, the caller's limit,
 * sizes that would overflow, and an array left whole when growth fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "harness.h"

static void test_doubling(void)
{
    size_t cap = 0;
    uint32_t *a = sonde_grow(NULL, &cap, 1, sizeof *a, UINT32_MAX);
    check(a != NULL, "first room");
    check_u64(cap, 16);
    for (uint32_t i = 0; i < 16; i++)
        a[i] = i;
    check(sonde_grow(a, &cap, 16, sizeof *a, UINT32_MAX) == a, "room enough: the same array");
    check_u64(cap, 16);
    a = sonde_grow(a, &cap, 17, sizeof *a, UINT32_MAX);
    check(a != NULL && a[15] == 15, "doubled, contents kept");
    check_u64(cap, 32);
    a = sonde_grow(a, &cap, 1000, sizeof *a, UINT32_MAX);
    check(a != NULL && a[3] == 3, "at least what is needed");
    check_u64(cap, 1000);
    free(a);
}

static void test_limits(void)
{
    size_t cap = 0;
    char *a = sonde_grow(NULL, &cap, 10, 1, 12);
    check(a != NULL, "room under the limit");
    check_u64(cap, 12); /* 16 would pass the limit */
    memcpy(a, "abcdefghij", 10);
    check(sonde_grow(a, &cap, 13, 1, 12) == NULL, "past the limit: refused");
    check(cap == 12 && memcmp(a, "abcdefghij", 10) == 0, "array and capacity left whole");
    free(a);

    /* need * elem past SIZE_MAX fails instead of wrapping to a small block */
    cap = 0;
    check(sonde_grow(NULL, &cap, SIZE_MAX / 8 + 1, 8, SIZE_MAX) == NULL, "overflowing size");
    check_u64(cap, 0);
    /* doubling near the limit stops at the limit */
    cap = (size_t)UINT32_MAX - 1;
    check(sonde_grow(NULL, &cap, (size_t)UINT32_MAX + 1, 1, UINT32_MAX) == NULL,
          "a 32-bit count cannot pass UINT32_MAX");
}

void test_grow(void)
{
    test_doubling();
    test_limits();
}
