/* fuzz.h - what sonde's fuzzers share: a seeded generator that gives the
 * same sequence on every machine, so a failing input can be reproduced,
 * and the driver of the fuzzers that mutate a corpus of valid files
 * (fuzz_json, fuzz_pprof). */
#ifndef SONDE_TESTS_FUZZ_H
#define SONDE_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Starts the sequence over from seed (0 is taken as 1). */
void fuzz_seed(uint64_t seed);
/* The next number of the sequence (xorshift64*). */
uint64_t fuzz_rng(void);
/* A number from 0 to n - 1 (0 when n is 0). */
size_t fuzz_below(size_t n);

/* A fuzzer over a corpus: feed loads one input and counts it in
 * *accepted when it is accepted (it exits on anything but a clean
 * refusal); mutate writes a mutation of src[0..len) into dst (room for
 * len + max_growth bytes) and feeds it. */
typedef struct fuzz_corpus {
    const char *name;              /* in messages: "fuzz_json" */
    uint64_t seed;
    size_t max_growth;
    const long *accepted;
    void (*feed)(const unsigned char *data, size_t len);
    void (*mutate)(const unsigned char *src, size_t len, unsigned char *dst);
} fuzz_corpus;

/* main() of such a fuzzer: `NAME ITERATIONS FILE...`.  Every FILE must
 * be accepted whole, then ITERATIONS mutations of them are fed; prints a
 * summary line.  Returns the exit code. */
int fuzz_corpus_main(int argc, char **argv, const fuzz_corpus *f);

#endif
