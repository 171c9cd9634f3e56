/* fuzz.c - the fuzzers' generator and corpus driver; see fuzz.h. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_state = 1; /* the fuzzers are single-threaded */

void fuzz_seed(uint64_t seed)
{
    rng_state = seed ? seed : 1;
}

uint64_t fuzz_rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

size_t fuzz_below(size_t n)
{
    return n ? (size_t)(fuzz_rng() % n) : 0;
}

static unsigned char *read_seed(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)n)) && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    if (f)
        fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return data;
}

int fuzz_corpus_main(int argc, char **argv, const fuzz_corpus *f)
{
    long iterations = argc > 2 ? strtol(argv[1], NULL, 10) : -1;
    if (argc < 3 || iterations < 0) {
        fprintf(stderr, "usage: %s ITERATIONS FILE...\n", f->name);
        return 2;
    }
    fuzz_seed(f->seed);
    int nseeds = argc - 2, rc = 0;
    unsigned char **seeds = calloc((size_t)nseeds, sizeof *seeds), *input = NULL;
    size_t *lens = calloc((size_t)nseeds, sizeof *lens), longest = 0;
    for (int i = 0; seeds && lens && rc == 0 && i < nseeds; i++) {
        if (!(seeds[i] = read_seed(argv[i + 2], &lens[i]))) {
            fprintf(stderr, "%s: cannot read %s\n", f->name, argv[i + 2]);
            rc = 1;
            break;
        }
        longest = lens[i] > longest ? lens[i] : longest;
        f->feed(seeds[i], lens[i]); /* every seed whole: each must be accepted */
        if (*f->accepted != i + 1) {
            fprintf(stderr, "%s: the valid file %s was refused\n", f->name, argv[i + 2]);
            rc = 1;
        }
    }
    if (rc == 0 && (!seeds || !lens || !(input = malloc(longest + f->max_growth)))) {
        fprintf(stderr, "%s: out of memory\n", f->name);
        rc = 1;
    }
    for (long i = 0; rc == 0 && i < iterations; i++) {
        int k = (int)fuzz_below((size_t)nseeds);
        f->mutate(seeds[k], lens[k], input);
    }
    if (rc == 0)
        printf("%s: seed 0x%llx, %d files, %ld inputs, %ld accepted, %ld rejected\n", f->name,
               (unsigned long long)f->seed, nseeds, iterations + nseeds, *f->accepted,
               iterations + nseeds - *f->accepted);
    for (int i = 0; seeds && i < nseeds; i++)
        free(seeds[i]);
    free(seeds);
    free(lens);
    free(input);
    return rc;
}
