/* fuzz_pstats.c - feeds the .prof reader random, mutated and cut input.
 *
 *   fuzz_pstats [ITERATIONS]    (default 20000)
 *
 * Every input must be accepted (0) or refused (-1) without a crash, a
 * leak or an out-of-bounds access: the Makefile runs this under ASan and
 * valgrind.  Accepted inputs are also rendered as `sonde report` would,
 * table and .prof, since those walk whatever the reader built.  The seed
 * is fixed, so a failing input can be reproduced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "formats/format.h"
#include "formats/pstats.h"
#include "report/table.h"

#define SEED 0x5eed5eedu

static long accepted, rejected;

/* Reads one input into a fresh profile, renders it if accepted, frees all. */
static void feed(const uint8_t *data, size_t len)
{
    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0) {
        fputs("fuzz_pstats: out of memory\n", stderr);
        exit(1);
    }
    sonde_stats_init(&s);
    char err[256];
    int rc = sonde_pstats_read(data, len, &p, &s, err, sizeof err);
    if (rc == 0) {
        accepted++;
        sonde_buf b;
        sonde_buf_init(&b);
        sonde_table_opts o = { .sort = "tottime", .callers_re = ".", .callees_re = "." };
        sonde_table_write(&b, &p, &s, &o, err, sizeof err);
        sonde_pstats_write(&b, &p, &s, NULL);
        sonde_buf_free(&b);
    } else if (rc == -1) {
        rejected++;
    } else {
        fprintf(stderr, "fuzz_pstats: reader returned %d\n", rc);
        exit(1);
    }
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* A valid .prof: recursion, two callers, a C function. */
static void valid_file(sonde_buf *out)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    uint32_t main = sonde_profile_func(&p, "app.py", 1, "main", NULL, SONDE_FUNC_PYTHON);
    uint32_t fib = sonde_profile_func(&p, "app.py", 9, "fib", NULL, SONDE_FUNC_PYTHON);
    uint32_t len = sonde_profile_func(&p, "~", 0, "<built-in method builtins.len>", NULL,
                                      SONDE_FUNC_C);
    int64_t t = sonde_profile_add_thread(&p, 1, 0, "MainThread");
    uint32_t n = p.threads[t].root;
    uint32_t m = sonde_profile_child_for(&p, n, main, 0);
    uint32_t f1 = sonde_profile_child_for(&p, m, fib, 0);
    uint32_t f2 = sonde_profile_child_for(&p, f1, fib, 0);
    uint32_t l1 = sonde_profile_child_for(&p, f2, len, 0);
    uint32_t l2 = sonde_profile_child_for(&p, m, len, 0);
    const uint32_t nodes[] = { m, f1, f2, l1, l2 };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        p.nodes[nodes[i]].calls = i + 1;
        p.nodes[nodes[i]].total = 1000 * (5 - i);
        p.nodes[nodes[i]].self = 500;
    }
    sonde_stats_from_profile(&s, &p);
    sonde_pstats_write(out, &p, &s, NULL);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* A copy of src with 1 to 8 bit flips, cuts, byte insertions or byte
 * overwrites with values marshal gives meaning to. */
static size_t mutate(const uint8_t *src, size_t len, uint8_t *dst)
{
    static const uint8_t interesting[] = { 0x00, 0x01, 0x7f, 0x80, 0xff, '(', ')', '{',
                                           '0', 'r', 'l', 'i', 'g', 'z', 'N' };
    memcpy(dst, src, len);
    for (size_t k = 1 + fuzz_below(8); k > 0; k--) {
        size_t at = fuzz_below(len);
        switch (fuzz_below(4)) {
        case 0:
            if (len)
                dst[at] ^= (uint8_t)(1u << fuzz_below(8));
            break;
        case 1:
            len = fuzz_below(len + 1);
            break;
        case 2:
            memmove(dst + at + 1, dst + at, len - at);
            dst[at] = (uint8_t)fuzz_rng();
            len++;
            break;
        default:
            if (len)
                dst[at] = interesting[fuzz_below(sizeof interesting)];
            break;
        }
    }
    return len;
}

int main(int argc, char **argv)
{
    fuzz_seed(SEED);
    long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    if (argc > 2 || iterations < 0) {
        fputs("usage: fuzz_pstats [ITERATIONS]\n", stderr);
        return 2;
    }
    sonde_buf valid;
    sonde_buf_init(&valid);
    valid_file(&valid);
    const uint8_t *good = (const uint8_t *)valid.data;
    if (!sonde_buf_ok(&valid) || valid.len == 0) {
        fputs("fuzz_pstats: cannot build the valid file\n", stderr);
        return 1;
    }

    /* The valid file itself and every prefix of it. */
    for (size_t n = 0; n <= valid.len; n++)
        feed(good, n);
    if (accepted != 1) {
        fprintf(stderr, "fuzz_pstats: %ld prefixes accepted, want only the whole file\n",
                accepted);
        return 1;
    }
    long inputs = (long)valid.len + 1;

    /* Half random bytes (every other one starting as a dict would), half
     * mutations, which grow the valid file by at most 8 bytes. */
    uint8_t *input = malloc(valid.len + 512 + 8);
    if (!input) {
        fputs("fuzz_pstats: out of memory\n", stderr);
        return 1;
    }
    for (long i = 0; i < iterations; i++, inputs++) {
        size_t len;
        if (i % 2) {
            len = fuzz_below(513);
            for (size_t j = 0; j < len; j++)
                input[j] = (uint8_t)fuzz_rng();
            if (len && i % 4 == 1)
                input[0] = '{';
        } else {
            len = mutate(good, valid.len, input);
        }
        feed(input, len);
    }
    free(input);
    sonde_buf_free(&valid);
    printf("fuzz_pstats: seed 0x%x, %ld inputs, %ld accepted, %ld rejected\n", SEED, inputs,
           accepted, rejected);
    return 0;
}
