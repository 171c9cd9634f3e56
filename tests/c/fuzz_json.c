/* fuzz_json.c - feeds the JSON readers mutations of files sonde writes.
 *
 *   fuzz_json ITERATIONS FILE...
 *
 * The FILEs are valid documents (tests/c/corpus: sonde run and record -f
 * json, a .prof converted to JSON, sonde lines and mem -o).  Each input,
 * a seed with 1 to 4 mutations (JSON tokens, numbers out of every range,
 * Python's escapes for bytes that are not UTF-8, cuts, copies of a slice)
 * goes through the loader sonde report and view use, and every accepted
 * one is rendered as they would: the table with callers and callees,
 * every output format, the call graph, the page, a diff with itself, or a
 * lines or mem document's table, plot and page.  Nothing may crash, leak
 * or read out of bounds (the Makefile runs this under ASan, UBSan with
 * float-cast-overflow, and valgrind).  The seed is fixed, so a failing
 * input can be reproduced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "report/diff.h"
#include "formats/format.h"
#include "report/lines_table.h"
#include "formats/load.h"
#include "report/mem_plot.h"
#include "report/mem_table.h"
#include "report/table.h"
#include "page/view.h"

#define SEED 0x15071507u
#define MAX_GROWTH 4096

static long accepted; /* inputs the loader took */

static const char *const formats[] = { "pstats", "collapsed", "json", "speedscope",
                                       "flamegraph", "chrome", "dot", "gecko" };

static void render_profile(const sonde_profile *p, const sonde_stats *s)
{
    char err[256];
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_table_opts t = { .sort = "tottime", .limit = 20 };
    sonde_table_write(&b, p, s, &t, err, sizeof err);
    t.callers_re = ".";
    t.callees_re = ".";
    sonde_table_write(&b, p, s, &t, err, sizeof err);
    sonde_format_opts o = { .short_paths = 1, .cwd = "/home/user", .min_count = 2 };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        sonde_format_find(formats[i])->write(&b, p, s, &o);
    int tree = sonde_load_has_tree(p);
    sonde_view_profile_write(&b, "fuzz", p, s, tree, 0);
    sonde_diff diff;
    if (sonde_diff_compute(&diff, p, s, p, s) == 0) {
        sonde_diff_table_write(&b, &diff, 10);
        sonde_view_side side = { p, s, tree };
        sonde_view_diff_write(&b, "fuzz", &side, &side, &diff);
        sonde_diff_free(&diff);
    }
    sonde_buf_free(&b);
}

static void render_document(const sonde_jtree *t, enum sonde_load_kind kind)
{
    char err[256];
    sonde_buf b;
    sonde_buf_init(&b);
    if (kind == SONDE_LOADED_LINES) {
        sonde_lines_table_write(&b, t, NULL, err, sizeof err);
    } else {
        sonde_mem_table_write(&b, t, err, sizeof err);
        sonde_mem_plot_write(&b, t, err, sizeof err);
    }
    sonde_view_document_write(&b, "fuzz", t, err, sizeof err);
    sonde_buf_free(&b);
}

/* Loads one input as sonde report would, renders it when accepted. */
static void feed(const unsigned char *data, size_t len)
{
    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0) {
        fputs("fuzz_json: out of memory\n", stderr);
        exit(1);
    }
    sonde_stats_init(&s);
    sonde_jtree doc;
    enum sonde_load_kind kind;
    char err[512];
    int rc = sonde_load_bytes("fuzz.json", data, len, &p, &s, &doc, &kind, err, sizeof err);
    if (rc == 0) {
        accepted++;
        if (kind == SONDE_LOADED_PROFILE) {
            render_profile(&p, &s);
        } else {
            render_document(&doc, kind);
            sonde_jtree_free(&doc);
        }
    } else if (rc != -1 || !err[0]) {
        fprintf(stderr, "fuzz_json: the loader returned %d with no message\n", rc);
        exit(1);
    }
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* What a mutation may put in: JSON's own tokens, numbers past every range
 * a reader converts to, and escapes. */
static const char *const tokens[] = {
    "\"", "\\", "{", "}", "[", "]", ",", ":", "0", "-1", "1e308", "-1e308", "1e999",
    "4294967295", "4294967296", "-2147483649", "2147483648", "1.8e19", "1e19", "9.3e18",
    "-9.3e18", "nan", "null", "true", "[]", "{}", "\"\\udc80\"", "\\udcff", "\\ud800",
    "\\u0000", "\xff", "\xed\xa0\x80", "\"mode\": \"run\"", "\"mode\": \"mem\"",
    "\"mode\": \"lines\"", "\"sample_rate\": 100,", "1e-320", "0.5", "-0",
};

/* dst = src with 1 to 4 mutations, most of them kinds that keep it JSON;
 * its length (at most len + MAX_GROWTH). */
static size_t mutate(const unsigned char *src, size_t len, unsigned char *dst)
{
    memcpy(dst, src, len);
    size_t cap = len + MAX_GROWTH;
    static const int kinds[8] = { 0, 1, 2, 3, 3, 3, 4, 4 };
    for (size_t k = 1 + fuzz_below(4); k > 0; k--) {
        size_t at = fuzz_below(len + 1);
        switch (kinds[fuzz_below(8)]) {
        case 0: /* flip a bit */
            if (len)
                dst[fuzz_below(len)] ^= (unsigned char)(1u << fuzz_below(8));
            break;
        case 1: /* cut the end, or a slice */
            if (fuzz_below(2)) {
                len = fuzz_below(len + 1);
            } else if (at < len) {
                size_t n = fuzz_below(len - at + 1);
                memmove(dst + at, dst + at + n, len - at - n);
                len -= n;
            }
            break;
        case 2: { /* insert a token */
            const char *t = tokens[fuzz_below(sizeof tokens / sizeof tokens[0])];
            size_t n = strlen(t);
            if (len + n <= cap) {
                memmove(dst + at + n, dst + at, len - at);
                memcpy(dst + at, t, n);
                len += n;
            }
            break;
        }
        case 3: { /* a number replaced by a token */
            size_t i = at;
            while (i < len && !(dst[i] >= '0' && dst[i] <= '9'))
                i++;
            size_t j = i;
            while (j < len && strchr("0123456789.eE+-", dst[j]))
                j++;
            const char *t = tokens[8 + fuzz_below(12)];
            size_t n = strlen(t);
            if (i < len && len - (j - i) + n <= cap) {
                memmove(dst + i + n, dst + j, len - j);
                memcpy(dst + i, t, n);
                len = len - (j - i) + n;
            }
            break;
        }
        default: { /* copy a slice of itself somewhere (longer lists, nesting) */
            unsigned char slice[512];
            size_t from = fuzz_below(len + 1), n = fuzz_below(len - from + 1);
            if (n > sizeof slice)
                n = sizeof slice;
            if (len + n <= cap) {
                memcpy(slice, dst + from, n);
                memmove(dst + at + n, dst + at, len - at);
                memcpy(dst + at, slice, n);
                len += n;
            }
            break;
        }
        }
    }
    return len;
}

/* One iteration: a mutation of a seed, fed. */
static void feed_mutation(const unsigned char *src, size_t len, unsigned char *dst)
{
    feed(dst, mutate(src, len, dst));
}

int main(int argc, char **argv)
{
    const fuzz_corpus f = { .name = "fuzz_json", .seed = SEED, .max_growth = MAX_GROWTH,
                            .accepted = &accepted, .feed = feed, .mutate = feed_mutation };
    return fuzz_corpus_main(argc, argv, &f);
}
