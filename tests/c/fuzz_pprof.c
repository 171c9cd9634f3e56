/* fuzz_pprof.c - feeds the pprof reader mutations of valid pprof files.
 *
 *   fuzz_pprof ITERATIONS FILE...
 *
 * The FILEs are valid profiles (tests/c/corpus: Go's CPU profile with
 * inlined frames, gzipped and not, and what sonde writes for run, record
 * and a mem document, ungzipped).  Each input, a seed with 1 to 4
 * mutations that know the wire format (varints cut or made overlong,
 * tags of every wire type, lengths made larger or smaller, bit flips,
 * cuts, copies of a slice), goes through the loader sonde report and view
 * use, sometimes gzipped first so that the decoder behind gzip is reached
 * too; every accepted one is rendered as sonde report would (the table,
 * every output format) and its own pprof output must read back.  Nothing
 * may crash, leak or read out of bounds (the Makefile runs this under
 * ASan, UBSan and valgrind).  The seed is fixed, so a failing input can be
 * reproduced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "formats/format.h"
#include "formats/gzip.h"
#include "formats/load.h"
#include "formats/pprof.h"
#include "formats/protobuf.h"
#include "page/view.h"
#include "report/table.h"

#define SEED 0x9b0f12u
#define MAX_GROWTH 4096

static long accepted; /* inputs the loader took */

static void render(const sonde_profile *p, const sonde_stats *s)
{
    char err[256];
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_table_opts t = { .sort = "tottime", .limit = 20, .callers_re = ".", .callees_re = "." };
    sonde_table_write(&b, p, s, &t, err, sizeof err);
    static const char *const formats[] = { "pstats", "collapsed", "json", "speedscope",
                                           "flamegraph" };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        sonde_format_find(formats[i])->write(&b, p, s, NULL);
    sonde_view_profile_write(&b, "fuzz", p, s, 1, 0);
    b.len = 0;
    if (sonde_pprof_write(&b, p, s, NULL) == 0) { /* sonde's own pprof reads back */
        sonde_profile again;
        sonde_profile_init(&again);
        if (sonde_pprof_read((const uint8_t *)b.data, b.len, &again, err, sizeof err) < 0) {
            fprintf(stderr, "fuzz_pprof: sonde's pprof of an accepted file was refused: %s\n",
                    err);
            exit(1);
        }
        sonde_profile_free(&again);
    }
    sonde_buf_free(&b);
}

/* Loads one input as sonde report would, renders it when accepted. */
static void feed(const unsigned char *data, size_t len)
{
    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0) {
        fputs("fuzz_pprof: out of memory\n", stderr);
        exit(1);
    }
    sonde_stats_init(&s);
    char err[512] = "";
    int rc = sonde_load_bytes("fuzz.pb", data, len, &p, &s, NULL, NULL, err, sizeof err);
    if (rc == 0) {
        accepted++;
        render(&p, &s);
    } else if (rc != -1 || !err[0]) {
        fprintf(stderr, "fuzz_pprof: the loader returned %d with no message\n", rc);
        exit(1);
    }
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* What a mutation may put in: tags of every wire type for Profile's
 * fields and the nested ones, varints at their limits, lengths. */
static const char *const tokens[] = {
    "\x08", "\x0a", "\x10", "\x12", "\x18", "\x1a", "\x22", "\x2a", "\x32", "\x0b", "\x0c",
    "\x09", "\x0d", "\x60", "\x70", "\x5a", "\x80", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
    "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x80\x80\x80\x80\x10", "\x7f", "\x00",
    "\x01", "\xff\xff\xff\xff\x0f", "\x1f\x8b", "\x12\x00", "\x22\x00", "\x2a\x00",
};

/* Where one top-level length-delimited field of a buffer lies. */
typedef struct span {
    size_t tag, body, len;     /* its tag's offset, its body's offset and length */
} span;

/* The length-delimited top-level fields of d[0..len), up to max. */
static size_t top_fields(const unsigned char *d, size_t len, span *out, size_t max)
{
    sonde_pb_reader r;
    sonde_pb_field f;
    const char *why;
    size_t n = 0, at = 0;
    sonde_pb_reader_init(&r, d, len);
    while (n < max && sonde_pb_next(&r, &f, &why) == 1) {
        if (f.wire == SONDE_PB_LEN)
            out[n++] = (span){ at, (size_t)(f.data - d), f.len };
        at = (size_t)(r.p - d);
    }
    return n;
}

/* Replaces d[at..at+cut) with n bytes of in; the new length, or len when
 * it would pass cap. */
static size_t splice(unsigned char *d, size_t len, size_t cap, size_t at, size_t cut,
                     const void *in, size_t n)
{
    if (len - cut + n > cap)
        return len;
    memmove(d + at + n, d + at + cut, len - at - cut);
    memcpy(d + at, in, n);
    return len - cut + n;
}

/* A field's body changed (a token in, or a slice out) and its length
 * written again, so that the message around it still parses. */
static size_t mutate_field(unsigned char *d, size_t len, size_t cap, const span *f)
{
    unsigned char body[1024 + MAX_GROWTH];
    if (f->len > 1024)
        return len;
    memcpy(body, d + f->body, f->len);
    size_t n = f->len, at = fuzz_below(n + 1);
    if (fuzz_below(2)) {
        const char *t = tokens[fuzz_below(sizeof tokens / sizeof tokens[0])];
        size_t k = strlen(t) ? strlen(t) : 1;
        memmove(body + at + k, body + at, n - at);
        memcpy(body + at, t, k);
        n += k;
    } else if (at < n) {
        size_t k = 1 + fuzz_below(n - at < 8 ? n - at : 8);
        memmove(body + at, body + at + k, n - at - k);
        n -= k;
    }
    unsigned char head[16];
    size_t h = 0;
    head[h++] = d[f->tag]; /* Profile's tags are one byte */
    for (size_t v = n; h < sizeof head; v >>= 7) {
        head[h++] = (unsigned char)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80)
            break;
    }
    size_t before = len;
    len = splice(d, len, cap, f->tag, f->body + f->len - f->tag, head, h);
    if (len == before && h != f->body - f->tag)
        return len;
    return splice(d, len, cap, f->tag + h, 0, body, n);
}

/* dst = src with 1 to 4 mutations; its length (at most len + MAX_GROWTH). */
static size_t mutate(const unsigned char *src, size_t len, unsigned char *dst)
{
    memcpy(dst, src, len);
    size_t cap = len + MAX_GROWTH;
    span fields[256];
    for (size_t k = 1 + fuzz_below(4); k > 0; k--) {
        size_t nf = top_fields(dst, len, fields, 256), at = fuzz_below(len + 1);
        switch (fuzz_below(8)) {
        case 0: /* flip a bit */
            if (len)
                dst[fuzz_below(len)] ^= (unsigned char)(1u << fuzz_below(8));
            break;
        case 1: /* a byte (often a length, a tag or an index) nudged */
            if (len)
                dst[fuzz_below(len)] += (unsigned char)(fuzz_below(2) ? 1 : -1);
            break;
        case 2: /* a byte replaced */
            if (len)
                dst[fuzz_below(len)] = (unsigned char)fuzz_rng();
            break;
        case 3: /* cut the end, or insert a token anywhere */
            if (fuzz_below(4) == 0) {
                len = fuzz_below(len + 1);
            } else {
                const char *t = tokens[fuzz_below(sizeof tokens / sizeof tokens[0])];
                len = splice(dst, len, cap, at, 0, t, strlen(t) ? strlen(t) : 1);
            }
            break;
        case 4:
        case 5: /* inside one field, its length kept right */
            if (nf)
                len = mutate_field(dst, len, cap, &fields[fuzz_below(nf)]);
            break;
        default: /* a field repeated elsewhere (more samples, ids twice) */
            if (nf) {
                unsigned char copy[2048];
                const span *f = &fields[fuzz_below(nf)];
                size_t n = f->body + f->len - f->tag;
                if (n <= sizeof copy) {
                    memcpy(copy, dst + f->tag, n);
                    len = splice(dst, len, cap, fields[fuzz_below(nf)].tag, 0, copy, n);
                }
            }
            break;
        }
    }
    return len;
}

/* data gzipped, fed, freed. */
static void feed_gzipped(const unsigned char *data, size_t len)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_gz *g = sonde_gz_new(&b);
    if (!g || sonde_gz_write(g, data, len) < 0 || sonde_gz_finish(g) < 0) {
        fputs("fuzz_pprof: gzip failed\n", stderr);
        exit(1);
    }
    feed((const unsigned char *)b.data, b.len);
    sonde_buf_free(&b);
}

/* One iteration: a mutation of a seed, fed as it is or gzipped (a seed
 * that is gzipped already is fed as it is). */
static void feed_mutation(const unsigned char *src, size_t len, unsigned char *dst)
{
    size_t n = mutate(src, len, dst);
    if (fuzz_below(4) == 0 && !sonde_gz_is(src, len))
        feed_gzipped(dst, n);
    else
        feed(dst, n);
}

int main(int argc, char **argv)
{
    const fuzz_corpus f = { .name = "fuzz_pprof", .seed = SEED, .max_growth = MAX_GROWTH,
                            .accepted = &accepted, .feed = feed, .mutate = feed_mutation };
    return fuzz_corpus_main(argc, argv, &f);
}
