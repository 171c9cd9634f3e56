/* test_pprof.c - the protobuf encoder against the wire format's own
 * examples, the pprof writer's golden bytes, read-back round trips, gzip,
 * and the reader's refusals of malformed files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format.h"
#include "formats/gzip.h"
#include "formats/json_read.h"
#include "formats/pprof.h"
#include "formats/protobuf.h"
#include "fixture.h"
#include "harness.h"

/* 1 when b holds exactly want[0..n). */
static int holds(const sonde_buf *b, const char *want, size_t n)
{
    return sonde_buf_ok(b) && b->len == n && memcmp(b->data, want, n) == 0;
}

#define HOLDS(b, lit) holds(b, lit, sizeof lit - 1)

/* The examples of protobuf.dev/programming-guides/encoding. */
static void test_encoder(void)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_pb_varint(&b, 0);
    sonde_pb_varint(&b, 1);
    sonde_pb_varint(&b, 127);
    sonde_pb_varint(&b, 128);
    sonde_pb_varint(&b, 150);
    sonde_pb_varint(&b, UINT64_MAX);
    check(HOLDS(&b, "\x00\x01\x7f\x80\x01\x96\x01"
                    "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "varints");
    b.len = 0;
    sonde_pb_uint(&b, 1, 150);
    check(HOLDS(&b, "\x08\x96\x01"), "field 1 = 150");
    b.len = 0;
    sonde_pb_uint(&b, 1, 0);
    sonde_pb_int(&b, 2, 0);
    check(b.len == 0, "proto3 leaves a zero out");
    sonde_pb_int(&b, 1, -2);
    check(HOLDS(&b, "\x08\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "int64 -2: ten bytes");
    b.len = 0;
    sonde_pb_bytes(&b, 2, "testing", 7);
    check(HOLDS(&b, "\x12\x07testing"), "field 2 = \"testing\"");
    b.len = 0;
    sonde_pb_bytes(&b, 6, "", 0);
    check(HOLDS(&b, "\x32\x00"), "an empty string is written");
    b.len = 0;
    sonde_buf msg;
    sonde_buf_init(&msg);
    sonde_pb_uint(&msg, 1, 150);
    sonde_pb_message(&b, 3, &msg);
    check(HOLDS(&b, "\x1a\x03\x08\x96\x01") && msg.len == 0, "nested message");
    b.len = 0;
    uint64_t packed[] = { 3, 270, 86942 };
    sonde_pb_packed(&b, 4, packed, 3);
    check(HOLDS(&b, "\x22\x06\x03\x8e\x02\x9e\xa7\x05"), "packed repeated");
    sonde_buf_free(&msg);
    sonde_buf_free(&b);
}

static void test_field_reader(void)
{
    static const uint8_t in[] = "\x08\x96\x01\x12\x07testing\x22\x06\x03\x8e\x02\x9e\xa7\x05"
                                "\x28\x05\x28\x07";
    sonde_pb_reader r;
    sonde_pb_field f;
    const char *why = NULL;
    sonde_pb_reader_init(&r, in, sizeof in - 1);
    check(sonde_pb_next(&r, &f, &why) == 1 && f.number == 1 && f.value == 150, "varint field");
    check(sonde_pb_next(&r, &f, &why) == 1 && f.number == 2 && f.len == 7 &&
          memcmp(f.data, "testing", 7) == 0, "string field");
    uint64_t v[3] = { 0 };
    check(sonde_pb_next(&r, &f, &why) == 1 && sonde_pb_count(&f) == 3 &&
          sonde_pb_unpack(&f, v, 3) == 0 && v[0] == 3 && v[1] == 270 && v[2] == 86942,
          "packed field");
    check(sonde_pb_next(&r, &f, &why) == 1 && sonde_pb_count(&f) == 1 &&
          sonde_pb_unpack(&f, v, 1) == 0 && v[0] == 5, "one unpacked item");
    check(sonde_pb_next(&r, &f, &why) == 1 && sonde_pb_next(&r, &f, &why) == 0, "the end");

    static const struct { const char *in; size_t len; const char *why; } bad[] = {
        { "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12, "overlong varint" },
        { "\x08\x96", 2, "truncated varint" },
        { "\x12\x08testing", 9, "length past the end" },
        { "\x0b\x0c", 2, "a group" },
        { "\x00\x01", 2, "field 0" },
        { "\x0d\x01\x02", 3, "truncated fixed32" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sonde_pb_reader_init(&r, (const uint8_t *)bad[i].in, bad[i].len);
        why = NULL;
        check(sonde_pb_next(&r, &f, &why) == -1 && why && *why, "%s refused", bad[i].why);
    }
    sonde_pb_field cut = { .number = 1, .wire = SONDE_PB_LEN,
                           .data = (const uint8_t *)"\x01\x80", .len = 2 };
    check(sonde_pb_count(&cut) == 1 && sonde_pb_unpack(&cut, v, 1) == -1,
          "a packed run cut inside a varint");
}

/* p's pprof, gunzipped into *out (malloc'd); its length, 0 on failure. */
static size_t pprof_bytes(const sonde_profile *p, uint8_t **out)
{
    sonde_buf b;
    sonde_buf_init(&b);
    size_t n = 0;
    char err[128];
    if (sonde_pprof_write(&b, p, NULL, NULL) < 0 ||
        sonde_gz_inflate((const uint8_t *)b.data, b.len, 1 << 20, out, &n, err, sizeof err) < 0)
        n = 0;
    sonde_buf_free(&b);
    return n;
}

/* A sampled profile at 100 Hz: thread "T" (kernel id 7) sampled twice in
 * main at line 3 and 5 times in Worker.work at line 6 called from there. */
static void small_sampled(sonde_profile *p)
{
    sonde_profile_init(p);
    fixture_app_funcs(p);
    p->sample_rate = 100;
    p->seconds_per_tick = 0.01;
    uint32_t main = sonde_profile_child_for(p, fixture_thread(p, 1, 7, "T"), FIXTURE_MAIN, 3);
    uint32_t work = sonde_profile_child_for(p, main, FIXTURE_WORK, 6);
    p->nodes[main].self = 2;
    p->nodes[main].total = 7;
    p->nodes[work].self = 5;
    p->nodes[work].total = 5;
}

/* Every byte, read back by go tool pprof -raw as: samples/count
 * cpu/nanoseconds[dflt], period 10000000; "2 20000000: 1" and
 * "5 50000000: 2 1", each thread:[T] thread_id:[7]; locations
 * "1: main app.py:3 s=1" and "2: Worker.work app.py:6 s=5(work)". */
static const char golden[] =
    "\x0a\x04\x08\x01\x10\x02"             /* sample_type: samples (1), count (2) */
    "\x0a\x04\x08\x03\x10\x04"             /* sample_type: cpu (3), nanoseconds (4) */
    "\x5a\x04\x08\x03\x10\x04"             /* period_type: cpu, nanoseconds */
    "\x60\x80\xad\xe2\x04"                 /* period: 10000000 */
    "\x70\x03"                             /* default_sample_type: cpu */
    "\x12\x16"                             /* sample: */
    "\x0a\x01\x01"                         /*   location_id: [1] */
    "\x12\x05\x02\x80\xda\xc4\x09"         /*   value: [2, 20000000] */
    "\x1a\x04\x08\x07\x10\x08"             /*   label: thread (7) = T (8) */
    "\x1a\x04\x08\x09\x18\x07"             /*   label: thread_id (9) = 7 */
    "\x12\x17"                             /* sample: */
    "\x0a\x02\x02\x01"                     /*   location_id: [2, 1], leaf first */
    "\x12\x05\x05\x80\xe1\xeb\x17"         /*   value: [5, 50000000] */
    "\x1a\x04\x08\x07\x10\x08\x1a\x04\x08\x09\x18\x07"
    "\x22\x08\x08\x01\x22\x04\x08\x01\x10\x03" /* location 1: line {function 1, line 3} */
    "\x22\x08\x08\x02\x22\x04\x08\x02\x10\x06" /* location 2: line {function 2, line 6} */
    "\x2a\x08\x08\x01\x10\x05\x20\x06\x28\x01" /* function 1: main (5), app.py (6), line 1 */
    "\x2a\x0a\x08\x02\x10\x0a\x18\x0b\x20\x06\x28\x05" /* function 2: Worker.work (10),
                                                          work (11), app.py, line 5 */
    "\x32\x00\x32\x07samples\x32\x05" "count\x32\x03" "cpu\x32\x0bnanoseconds\x32\x04main"
    "\x32\x06" "app.py\x32\x06thread\x32\x01T\x32\x09thread_id\x32\x0bWorker.work"
    "\x32\x04work";                        /* string_table, "" first */

static void test_writer_golden(void)
{
    sonde_profile p;
    small_sampled(&p);
    uint8_t *got = NULL;
    size_t n = pprof_bytes(&p, &got);
    check(n == sizeof golden - 1 && memcmp(got, golden, n) == 0,
          "the pprof bytes of a small sampled profile (%zu bytes, want %zu)", n,
          sizeof golden - 1);
    free(got);
    sonde_profile_free(&p);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The collapsed stacks of p, sorted (their order is not defined). */
static char *collapsed(const sonde_profile *p)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_collapsed_write(&b, p, NULL, NULL);
    sonde_buf_putc(&b, '\0');
    char *out = calloc(b.len + 2, 1), *lines[64];
    size_t n = 0;
    for (char *l = strtok(b.data, "\n"); l && n < 64; l = strtok(NULL, "\n"))
        lines[n++] = l;
    qsort(lines, n, sizeof *lines, by_text);
    for (size_t i = 0; i < n; i++)
        strcat(strcat(out, lines[i]), "\n");
    sonde_buf_free(&b);
    return out;
}

/* p written as pprof and read back into *back (initialised here). */
static int round_trip(const sonde_profile *p, sonde_profile *back, char *err, size_t errlen)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_profile_init(back);
    int rc = sonde_pprof_write(&b, p, NULL, NULL) < 0 ? -1
             : sonde_pprof_read((const uint8_t *)b.data, b.len, back, err, errlen);
    sonde_buf_free(&b);
    return rc;
}

/* The run fixture (two threads, a recursive call, a C function): the
 * same tree back, so the same stacks and the same pstats figures. */
static void test_round_trip_traced(void)
{
    sonde_profile p, back;
    sonde_stats s, s2;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    sonde_stats_init(&s2);
    fixture_app(&p, &s);
    char err[256] = "";
    check(round_trip(&p, &back, err, sizeof err) == 0, "read back: %s", err);
    check(back.sample_rate == 0 && back.nthreads == 2 && back.nfuncs == 3, "a profile of calls");
    check_str(sonde_profile_str(&back, back.threads[1].name), "pool \"A\"");
    char *want = collapsed(&p), *got = collapsed(&back);
    check_str(got, want);
    free(want);
    free(got);
    sonde_stats_from_profile(&s2, &back);
    for (uint32_t f = 0; f < p.nfuncs; f++) {
        const sonde_func *a = &p.funcs[f], *c = &back.funcs[f];
        check_str(sonde_profile_str(&back, c->qualname), sonde_profile_str(&p, a->qualname));
        check_str(sonde_profile_str(&back, c->name), sonde_profile_str(&p, a->name));
        check_str(sonde_profile_str(&back, c->file), sonde_profile_str(&p, a->file));
        check(c->line == a->line && c->kind == a->kind, "function %u's line and kind", f);
        check_u64(s2.funcs[f].ncalls, s.funcs[f].ncalls);
        check_u64(s2.funcs[f].pcalls, s.funcs[f].pcalls);
        check(fabs(s2.funcs[f].tottime - s.funcs[f].tottime) < 1e-9 &&
              fabs(s2.funcs[f].cumtime - s.funcs[f].cumtime) < 1e-9,
              "function %u: tottime %g cumtime %g, want %g %g", f, s2.funcs[f].tottime,
              s2.funcs[f].cumtime, s.funcs[f].tottime, s.funcs[f].cumtime);
    }
    sonde_stats_free(&s);
    sonde_stats_free(&s2);
    sonde_profile_free(&p);
    sonde_profile_free(&back);
}

/* A sampled profile: lines kept, two threads of one name kept apart by
 * their kernel ids, the rate from the period. */
static void test_round_trip_sampled(void)
{
    sonde_profile p, back;
    small_sampled(&p);
    uint32_t root = fixture_thread(&p, 2, 8, "T");
    uint32_t work = sonde_profile_child_for(&p, root, FIXTURE_WORK, 9);
    uint32_t len = sonde_profile_child_for(&p, work, FIXTURE_LEN, 0);
    p.nodes[work].self = 1;
    p.nodes[len].self = 4;
    char err[256] = "";
    check(round_trip(&p, &back, err, sizeof err) == 0, "read back: %s", err);
    check(back.sample_rate == 100 && back.nthreads == 2 && back.threads[1].native_id == 8,
          "rate %g, %u threads", back.sample_rate, back.nthreads);
    char *want = collapsed(&p), *got = collapsed(&back);
    check_str(got, want);
    check(strstr(got, "main (app.py:3);Worker.work (app.py:6) 5\n") != NULL, "lines kept");
    free(want);
    free(got);
    sonde_profile_free(&p);
    sonde_profile_free(&back);
}

/* A mem document: in use per leak stack (the default sample type). */
static void test_mem_document(void)
{
    static const char doc[] =
        "{\"sonde\": 1, \"mode\": \"mem\", \"sample_bytes\": 512, \"functions\": ["
        "{\"file\": \"m.py\", \"name\": \"build\", \"first_line\": 2, \"lines\": ["
        "{\"line\": 3, \"alloc_bytes\": 4000, \"net_bytes\": 3000}]},"
        "{\"file\": \"m.py\", \"name\": \"main\", \"first_line\": 5, \"lines\": ["
        "{\"line\": 6, \"alloc_bytes\": 4100, \"net_bytes\": 3000}]}],"
        "\"leaks\": [{\"bytes\": 3000, \"stack\": [{\"file\": \"m.py\", \"name\": \"main\", "
        "\"line\": 6}, {\"file\": \"m.py\", \"name\": \"build\", \"line\": 3}]},"
        "{\"bytes\": 64, \"stack\": []}]}";
    sonde_jtree t;
    char err[256] = "";
    check(sonde_json_read(&t, doc, sizeof doc - 1, err, sizeof err) == 0, "%s", err);
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_pprof_mem_write(&b, &t, err, sizeof err) == 0, "mem as pprof: %s", err);
    sonde_profile p;
    sonde_profile_init(&p);
    check(sonde_pprof_read((const uint8_t *)b.data, b.len, &p, err, sizeof err) == 0,
          "read back: %s", err);
    char *got = collapsed(&p);
    check(p.sample_rate == 0 && p.seconds_per_tick == 1, "bytes as weights");
    check_str(got, "(outside the profiled functions) (~:0) 64000000\n"
                   "main (m.py:6);build (m.py:3) 3000000000\n");
    free(got);
    sonde_profile_free(&p);
    sonde_buf_free(&b);
    sonde_jtree_free(&t);
    static const char lines_doc[] = "{\"sonde\": 1, \"mode\": \"lines\", \"functions\": []}";
    sonde_json_read(&t, lines_doc, sizeof lines_doc - 1, err, sizeof err);
    sonde_buf_init(&b);
    check(sonde_pprof_mem_write(&b, &t, err, sizeof err) == -1 && strstr(err, "mem"),
          "a lines document is refused");
    sonde_buf_free(&b);
    sonde_jtree_free(&t);
}

/* Other tools' files: a Location of inlined Lines is its innermost
 * function called from the one it was inlined into; one with no Line is
 * named after its mapping's file and its offset there, or its address. */
static void test_foreign_frames(void)
{
    static const char *const strings[] = { "", "samples", "count", "/usr/lib/libx.so", "sq",
                                           "spin", "a.go" };
    sonde_buf b, m, line;
    sonde_buf_init(&b);
    sonde_buf_init(&m);
    sonde_buf_init(&line);
    sonde_pb_uint(&m, 1, 1);
    sonde_pb_uint(&m, 2, 2);
    sonde_pb_message(&b, 1, &m);                        /* sample_type samples/count */
    sonde_pb_uint(&m, 1, 1);
    sonde_pb_uint(&m, 2, 0x400000);
    sonde_pb_uint(&m, 3, 0x500000);
    sonde_pb_uint(&m, 4, 0x1000);
    sonde_pb_uint(&m, 5, 3);
    sonde_pb_message(&b, 3, &m);                        /* mapping 1: libx.so */
    sonde_pb_uint(&m, 1, 1);
    sonde_pb_uint(&m, 2, 1);
    sonde_pb_uint(&m, 3, 0x400123);
    sonde_pb_message(&b, 4, &m);                        /* location 1: in libx.so */
    sonde_pb_uint(&m, 1, 2);
    sonde_pb_uint(&m, 3, 0x777);
    sonde_pb_message(&b, 4, &m);                        /* location 2: no mapping */
    sonde_pb_uint(&m, 1, 3);
    sonde_pb_uint(&line, 1, 1);
    sonde_pb_uint(&line, 2, 9);
    sonde_pb_message(&m, 4, &line);                     /*   sq:9, inlined into */
    sonde_pb_uint(&line, 1, 2);
    sonde_pb_uint(&line, 2, 15);
    sonde_pb_message(&m, 4, &line);                     /*   spin:15 */
    sonde_pb_message(&b, 4, &m);                        /* location 3 */
    for (uint64_t f = 1; f <= 2; f++) {
        sonde_pb_uint(&m, 1, f);
        sonde_pb_uint(&m, 2, 3 + f);
        sonde_pb_uint(&m, 4, 6);
        sonde_pb_message(&b, 5, &m);                    /* functions sq, spin in a.go */
    }
    uint64_t locations[] = { 1, 2, 3 }, value = 3;
    sonde_pb_packed(&m, 1, locations, 3);
    sonde_pb_packed(&m, 2, &value, 1);
    sonde_pb_message(&b, 2, &m);                        /* sample: leaf first */
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        sonde_pb_bytes(&b, 6, strings[i], strlen(strings[i]));
    sonde_profile p;
    sonde_profile_init(&p);
    char err[256] = "";
    check(sonde_pprof_read((const uint8_t *)b.data, b.len, &p, err, sizeof err) == 0,
          "a foreign file: %s", err);
    check(p.sample_rate == 1, "samples with no period: one a second");
    char *got = collapsed(&p);
    check_str(got, "spin (a.go:15);sq (a.go:9);0x777 (~:0);libx.so+0x1123 (~:0) 3\n");
    free(got);
    sonde_profile_free(&p);
    sonde_buf_free(&b);
    sonde_buf_free(&m);
    sonde_buf_free(&line);
}

static void test_gzip(void)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_gz *g = sonde_gz_new(&b);
    char big[70000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 7 % 251);
    check(g && sonde_gz_write(g, "hello ", 6) == 0 && sonde_gz_write(g, big, sizeof big) == 0 &&
          sonde_gz_finish(g) == 0 && sonde_gz_is((const uint8_t *)b.data, b.len), "gzip");
    uint8_t *out = NULL;
    size_t n = 0;
    char err[128] = "";
    check(sonde_gz_inflate((const uint8_t *)b.data, b.len, 1 << 20, &out, &n, err,
                           sizeof err) == 0 && n == 6 + sizeof big &&
          memcmp(out, "hello ", 6) == 0 && memcmp(out + 6, big, sizeof big) == 0, "gunzip");
    free(out);
    check(sonde_gz_inflate((const uint8_t *)b.data, b.len, 1000, &out, &n, err,
                           sizeof err) == -1 && strstr(err, "largest"), "the size cap: %s", err);
    check(sonde_gz_inflate((const uint8_t *)b.data, b.len - 9, 1 << 20, &out, &n, err,
                           sizeof err) == -1 && strstr(err, "cut short"), "cut: %s", err);
    sonde_buf_put(&b, "xyz", 3);
    check(sonde_gz_inflate((const uint8_t *)b.data, b.len, 1 << 20, &out, &n, err,
                           sizeof err) == -1 && strstr(err, "after the end"), "trailing: %s", err);
    b.data[20] ^= 0x55;
    check(sonde_gz_inflate((const uint8_t *)b.data, b.len - 3, 1 << 20, &out, &n, err,
                           sizeof err) == -1, "corrupt");
    sonde_buf_free(&b);
}

/* The writer without zlib: stored blocks that zlib's inflate reads back,
 * checking gzip's CRC-32 and length, for sizes at and around the block
 * size (65,535) and none at all. */
static void test_gzip_stored(void)
{
    static const size_t sizes[] = { 0, 1, 65534, 65535, 65536, 200000 };
    static unsigned char data[200000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 131 % 253);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sonde_buf b;
        sonde_buf_init(&b);
        sonde_gz *g = sonde_gz_new_stored(&b);
        /* In two writes, the first ending mid-block. */
        size_t first = sizes[k] / 3;
        check(g && sonde_gz_write(g, data, first) == 0 &&
              sonde_gz_write(g, data + first, sizes[k] - first) == 0 && sonde_gz_finish(g) == 0,
              "stored gzip of %zu bytes", sizes[k]);
        uint8_t *out = NULL;
        size_t n = 0;
        char err[128] = "";
        check(sonde_gz_inflate((const uint8_t *)b.data, b.len, 1 << 20, &out, &n, err,
                               sizeof err) == 0 && n == sizes[k] && memcmp(out, data, n) == 0,
              "%zu bytes stored, read back: %s", sizes[k], err);
        free(out);
        /* Header, a 5-byte head a block (one at least), the data, CRC and length. */
        size_t blocks = sizes[k] ? (sizes[k] + 65534) / 65535 : 1;
        check_u64(b.len, 10 + 5 * blocks + sizes[k] + 8);
        b.data[b.len - 6] ^= 1; /* the CRC */
        check(sonde_gz_inflate((const uint8_t *)b.data, b.len, 1 << 20, &out, &n, err,
                               sizeof err) == -1, "a wrong CRC is refused (%zu bytes)", sizes[k]);
        sonde_buf_free(&b);
    }
}

/* The reader's refusals: one message each, never a crash. */
static void test_bad_files(void)
{
    static const struct { const char *in; size_t len; const char *why; } bad[] = {
        { "\x0a\x04\x08\x01\x10\x02", 6, "names string 1" },
        { "\x32\x00\x32\x01x", 5, "no sample types" },
        { "\x0a\x02\x08\x00\x12\x04\x0a\x01\x05\x10", 10, "truncated" },
        { "\x0a\x00\x12\x06\x0a\x01\x05\x12\x01\x01\x32\x00", 12, "location 5" },
        { "\x0a\x00\x12\x02\x12\x00\x32\x00", 8, "0 values for 1" },
        { "\x0a\x00\x22\x02\x08\x01\x22\x02\x08\x01\x32\x00", 12, "two Locations" },
        { "\x0a\x00\x22\x04\x22\x02\x08\x09\x32\x00", 10, "function 9" },
        { "\x08\x01", 2, "not a message" },
        { "\x0a\x02\x08\x09", 4, "string 9" },
        { "\x0a\x00\x22\x02\x22\x05", 6, "past the end" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sonde_profile p;
        sonde_profile_init(&p);
        char err[256] = "";
        int rc = sonde_pprof_read((const uint8_t *)bad[i].in, bad[i].len, &p, err, sizeof err);
        check(rc == -1 && strstr(err, bad[i].why), "bad file %zu: '%s', want '%s'", i, err,
              bad[i].why);
        sonde_profile_free(&p);
    }
    /* a sample deeper than the cap: one location listed 70000 times */
    size_t n = 70000;
    uint8_t *deep = malloc(n + 64), *at = deep;
    memcpy(at, "\x0a\x00\x22\x02\x08\x01\x32\x00\x12", 9);
    at += 9;
    size_t body = 4 + n + 3; /* location_id: tag, length (3 bytes), ids; value: 3 bytes */
    *at++ = (uint8_t)(0x80 | (body & 0x7f));
    *at++ = (uint8_t)(0x80 | ((body >> 7) & 0x7f));
    *at++ = (uint8_t)(body >> 14);
    *at++ = 0x0a;
    *at++ = (uint8_t)(0x80 | (n & 0x7f));
    *at++ = (uint8_t)(0x80 | ((n >> 7) & 0x7f));
    *at++ = (uint8_t)(n >> 14);
    memset(at, 1, n);
    at += n;
    memcpy(at, "\x12\x01\x01", 3);
    at += 3;
    sonde_profile p;
    sonde_profile_init(&p);
    char err[256] = "";
    check(sonde_pprof_read(deep, (size_t)(at - deep), &p, err, sizeof err) == -1 &&
          strstr(err, "65536 frames deep"), "a sample too deep: '%s'", err);
    sonde_profile_free(&p);
    free(deep);
    check(sonde_pprof_is((const uint8_t *)"\x1f\x8b", 2) && sonde_pprof_is(
          (const uint8_t *)golden, 4) && !sonde_pprof_is((const uint8_t *)"{\"", 2), "sniffing");
}

void test_pprof(void)
{
    test_encoder();
    test_field_reader();
    test_writer_golden();
    test_round_trip_traced();
    test_round_trip_sampled();
    test_mem_document();
    test_foreign_frames();
    test_gzip();
    test_gzip_stored();
    test_bad_files();
}
