/* test_strtab.c - interned strings: one id per distinct string, stable ids. */
#include <stdio.h>
#include <string.h>

#include "core/strtab.h"
#include "harness.h"

static void test_basics(void)
{
    sonde_strtab t;
    sonde_strtab_init(&t);
    check_u64(sonde_strtab_intern_cstr(&t, "alpha"), 0);
    check_u64(sonde_strtab_intern_cstr(&t, "beta"), 1);
    check_u64(sonde_strtab_intern_cstr(&t, "alpha"), 0);
    /* A length-bounded prefix is the same string as its C string. */
    check_u64(sonde_strtab_intern(&t, "alphabet", 5), 0);
    check_u64(sonde_strtab_intern(&t, "alphabet", 8), 2);
    /* A string stops at an embedded NUL. */
    check_u64(sonde_strtab_intern(&t, "beta\0gamma", 10), 1);
    check_u64(sonde_strtab_intern_cstr(&t, ""), 3);
    check_u64(t.count, 4);
    check_str(sonde_strtab_get(&t, 0), "alpha");
    check_str(sonde_strtab_get(&t, 1), "beta");
    check_str(sonde_strtab_get(&t, 2), "alphabet");
    check_str(sonde_strtab_get(&t, 3), "");
    check_str(sonde_strtab_get(&t, 4), "");   /* unknown id */
    sonde_strtab_free(&t);
    check(t.count == 0 && t.bytes == NULL, "free empties the table");
}

/* Enough strings to grow the hash slots (1024) and the bytes (4096). */
static void test_growth(void)
{
    enum { N = 5000 };
    sonde_strtab t;
    sonde_strtab_init(&t);
    char s[32];
    int wrong_id = 0, wrong_text = 0, wrong_again = 0;
    for (int i = 0; i < N; i++) {
        snprintf(s, sizeof s, "name_%d", i);
        wrong_id += sonde_strtab_intern_cstr(&t, s) != i;
    }
    for (int i = 0; i < N; i++) {
        snprintf(s, sizeof s, "name_%d", i);
        wrong_text += strcmp(sonde_strtab_get(&t, (uint32_t)i), s) != 0;
        wrong_again += sonde_strtab_intern_cstr(&t, s) != i;
    }
    check_u64(wrong_id, 0);
    check_u64(wrong_text, 0);
    check_u64(wrong_again, 0);
    check_u64(t.count, N);
    sonde_strtab_free(&t);
}

void test_strtab(void)
{
    test_basics();
    test_growth();
}
