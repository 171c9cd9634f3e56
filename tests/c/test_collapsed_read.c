/* test_collapsed_read.c - collapsed stacks read back: every dialect
 * (sonde's, py-spy's, austin's, Python 3.15's, Brendan Gregg's), sonde's
 * own output read and written again unchanged, the refusals of bad
 * files, and mutated files that must never crash the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "formats/collapsed_frame.h"
#include "formats/collapsed_read.h"
#include "formats/format.h"
#include "formats/load.h"
#include "harness.h"

typedef struct loaded {
    sonde_profile p;
    sonde_stats s;
    int rc;
    char err[512];
} loaded;

/* text through the loader sonde report uses (recognised by content). */
static void load_text(loaded *l, const char *text, size_t len)
{
    sonde_profile_init(&l->p);
    sonde_stats_init(&l->s);
    l->err[0] = '\0';
    l->rc = sonde_load_bytes("x.collapsed", (const unsigned char *)text, len, &l->p, &l->s,
                             NULL, NULL, l->err, sizeof l->err);
}

static void unload(loaded *l)
{
    sonde_stats_free(&l->s);
    sonde_profile_free(&l->p);
}

/* The function (file, name), or SONDE_NO_FUNC. */
static uint32_t find_func(const sonde_profile *p, const char *file, const char *name)
{
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if (strcmp(sonde_profile_str(p, p->funcs[f].file), file) == 0 &&
            strcmp(sonde_profile_str(p, p->funcs[f].name), name) == 0)
            return f;
    return SONDE_NO_FUNC;
}

/* The own samples of (file, name) in the stats; -1 when it is missing. */
static double own(const loaded *l, const char *file, const char *name)
{
    uint32_t f = find_func(&l->p, file, name);
    return f == SONDE_NO_FUNC ? -1 : l->s.funcs[f].tottime;
}

/* sonde's -f collapsed: label roots, [truncated], escapes; written again
 * it is the same text (the node keeps its frame's line). */
static void test_sonde_dialect(void)
{
    static const char text[] =
        "process 123 (python a.py) (~:0);<module> (/tmp/a.py:1);work (/tmp/a.py:5) 12\n"
        "process 123 (python a.py) (~:0);<module> (/tmp/a.py:1);work (/tmp/a.py:7) 3\n"
        "process 123 (python a.py) (~:0);<module> (/tmp/a.py:1) 1\n"
        "[truncated] (~:0);deep (/tmp/my (copy)/b.py:9) 2\n"
        "esc\\x1bape (/tmp/a.py:20);C\\x41 (/tmp/\\xff.py:3) 4\n";
    loaded l;
    load_text(&l, text, sizeof text - 1);
    check(l.rc == 0, "sonde's collapsed stacks load: %s", l.err);
    check_dbl(l.p.sample_rate, 1);
    check_u64(l.p.nthreads, 1);
    check_str(sonde_profile_str(&l.p, l.p.threads[0].name), "all threads");
    check_dbl(own(&l, "/tmp/a.py", "work"), 15);
    check_dbl(own(&l, "/tmp/a.py", "<module>"), 1);
    check_dbl(own(&l, "~", "process 123 (python a.py)"), 0);
    check_dbl(own(&l, "/tmp/my (copy)/b.py", "deep"), 2);
    check_dbl(own(&l, "/tmp/a.py", "esc\x1b" "ape"), 0);
    check_dbl(own(&l, "/tmp/\xff.py", "C\\x41"), 4);
    uint32_t work = find_func(&l.p, "/tmp/a.py", "work");
    check(work != SONDE_NO_FUNC && l.p.funcs[work].line == 5, "work's line is its smallest");
    check(l.p.funcs[find_func(&l.p, "~", "[truncated]")].kind == SONDE_FUNC_C,
          "a label of file ~ is a C function");
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_collapsed_write(&b, &l.p, &l.s, NULL) == 0, "written again");
    sonde_buf_putc(&b, '\0');
    char *got = fixture_sorted_lines(b.data), *want = fixture_sorted_lines(text);
    check_str(got, want);
    free(got);
    free(want);
    sonde_buf_free(&b);
    unload(&l);
}

/* py-spy: NAME (FILE:LINE), its thread roots, frames without a line. */
static void test_pyspy_dialect(void)
{
    static const char text[] =
        "thread (0x7F12AB);main (a.py:3);f (a.py:7) 5\n"
        "thread (0x7F12AC);main (a.py:3);g (a.py) 2\r\n"
        "main (a.py:3);f (a.py:8) 1\n"
        " 4\n"; /* -f raw: samples of no frames (idle threads with --idle) */
    loaded l;
    load_text(&l, text, sizeof text - 1);
    check(l.rc == 0, "py-spy's stacks load: %s", l.err);
    check_u64(l.p.nthreads, 3);
    const sonde_node *all = &l.p.nodes[l.p.threads[2].root];
    check_str(sonde_profile_str(&l.p, l.p.threads[2].name), "all threads");
    check(all->total == 5 && all->self == 4, "frameless samples count on the root: %llu, %llu",
          (unsigned long long)all->total, (unsigned long long)all->self);
    check(l.p.rate_unknown, "collapsed stacks have no rate");
    check_u64(l.p.threads[0].ident, 0x7F12AB);
    check_str(sonde_profile_str(&l.p, l.p.threads[1].name), "thread 0x7F12AC");
    check_dbl(own(&l, "a.py", "f"), 6);
    check_dbl(own(&l, "~", "g (a.py)"), 2);
    check_dbl(own(&l, "~", "thread (0x7F12AB)"), -1);
    unload(&l);
}

/* Python 3.15's profiling.sampling --collapsed, and austin's. */
static void test_colon_dialects(void)
{
    static const char text[] =
        "tid:8880;<frozen runpy>:_run_module_as_main:201;shares.py:<module>:10;"
        "shares.py:burn:4 490\n"
        "tid:8880;<frozen runpy>:_run_module_as_main:201;shares.py:<module>:10;<GC> 7\n"
        "tid:8881;threading.py:Thread.run:1161;shares.py:burn:5 30\n"
        "tid:8882 4\n"
        "P42;T0:4711;/srv/c:d/app.py:main:3;/srv/c:d/app.py:work:9 11\n";
    loaded l;
    load_text(&l, text, sizeof text - 1);
    check(l.rc == 0, "3.15's and austin's stacks load: %s", l.err);
    check_u64(l.p.nthreads, 4);
    check_u64(l.p.threads[0].native_id, 8880);
    check_str(sonde_profile_str(&l.p, l.p.threads[1].name), "thread 8881");
    check_str(sonde_profile_str(&l.p, l.p.threads[3].name), "process 42 thread 0:4711");
    check_u64(l.p.nodes[l.p.threads[2].root].self, 4);
    check_dbl(own(&l, "shares.py", "burn"), 520);
    check_dbl(own(&l, "~", "<GC>"), 7);
    check_dbl(own(&l, "<frozen runpy>", "_run_module_as_main"), 0);
    check_dbl(own(&l, "/srv/c:d/app.py", "work"), 11);
    uint32_t burn = find_func(&l.p, "shares.py", "burn");
    check(burn != SONDE_NO_FUNC && l.p.funcs[burn].kind == SONDE_FUNC_PYTHON, "burn is Python");
    unload(&l);
}

/* Brendan Gregg's stackcollapse: names only. */
static void test_plain_dialect(void)
{
    static const char text[] = "main;foo;bar 7\nmain;foo 3\n\nmain;std::vector<int>::at 2\n";
    loaded l;
    load_text(&l, text, sizeof text - 1);
    check(l.rc == 0, "plain stacks load: %s", l.err);
    check_dbl(own(&l, "~", "bar"), 7);
    check_dbl(own(&l, "~", "foo"), 3);
    check_dbl(own(&l, "~", "std::vector<int>::at"), 2);
    check_dbl(l.s.funcs[find_func(&l.p, "~", "main")].cumtime, 12);
    unload(&l);
}

/* One frame's rules, one at a time. */
static void test_frame_rules(void)
{
    sonde_cframe f;
    const char *s = "a (b:c:12)";
    sonde_cframe_parse(s, strlen(s), &f);
    check(f.name_len == 1 && f.file_len == 3 && f.line == 12, "NAME (FILE:LINE), FILE with ':'");
    s = "x.py:f:-1";
    sonde_cframe_parse(s, strlen(s), &f);
    check(f.name_len == 1 && f.file_len == 4 && f.line == -1, "FILE:FUNC:LINE, a negative line");
    s = "x.py:f:99999999999";
    sonde_cframe_parse(s, strlen(s), &f);
    check(f.name_len == strlen(s) && f.line == 0, "a line past 32 bits makes a name only");
    s = "f (x.py:)";
    sonde_cframe_parse(s, strlen(s), &f);
    check(f.name_len == strlen(s) && f.file[0] == '~', "no digits: a name only");
    char out[16];
    check_u64(sonde_cframe_unescape("\\x00\\x41\\x0a\\x", 14, out), 11);
    check(memcmp(out, "\\x00\\x41\n\\x", 11) == 0, "only the bytes the writer escapes");
}

/* Each bad file gets one message that names what is wrong. */
static void check_refused(const char *text, size_t len, const char *why)
{
    loaded l;
    load_text(&l, text, len);
    check(l.rc == -1 && strstr(l.err, why), "%.40s... refused with '%s': %s", text, why, l.err);
    unload(&l);
}

static void test_refusals(void)
{
#define REFUSED(lit, why) check_refused(lit, sizeof lit - 1, why)
    REFUSED("main;foo\n", "line 1 does not end in a count");
    REFUSED("main;foo 1\nmain;bar\n", "line 2 does not end in a count");
    REFUSED("main 9007199254740992\n", "line 1 has a count too large");
    REFUSED("main 99999999999999999999999\n", "too large");
    REFUSED("a 9007199254740991\nb 1\n", "line 2 brings the counts past 2^53 - 1");
    REFUSED("a;;b 3\n", "line 1 has an empty frame");
    REFUSED("a;b; 3\n", "empty frame");
    REFUSED("tid:4; 3\n", "empty frame");
    REFUSED("a;b 3\n12\n", "line 2 has no frames");
    REFUSED("\n \n\t\r\n\n", "no stacks");
    REFUSED("\x00\x01garbage;\xff\xfe 1\n", "is not a profile file sonde can read");
    REFUSED("main 1\n\x01\x02\x03 4\n", "line 2 holds byte 0x01");
    REFUSED("main 1\nfoo\x00;bar 2\n", "line 2 holds byte 0x00");
#undef REFUSED
    size_t big = SONDE_COLLAPSED_MAX_LINE + 16;
    char *line = malloc(big + 1);
    memset(line, 'a', big);
    memcpy(line + big - 3, " 1\n", 3);
    check_refused(line, big, "line 1 is longer than 1048576 bytes");
    size_t depth = SONDE_COLLAPSED_MAX_DEPTH + 1;
    for (size_t i = 0; i < depth; i++)
        memcpy(line + 2 * i, "f;", 2);
    memcpy(line + 2 * depth - 1, " 1\n", 3);
    check_refused(line, 2 * depth + 2, "line 1 is more than 65536 frames deep");
    free(line);
}

/* Mutations of a valid file (bytes flipped, cut, separators and
 * numbers put in) must load or be refused with a message, never crash:
 * ASan and valgrind runs of the unit tests check the bounds. */
static void test_mutations(void)
{
    static const char seed[] =
        "process 1 (py) (~:0);<module> (/a.py:1);f (/a.py:2) 5\n"
        "tid:7;a.py:g:3;<GC> 2\nP1;T0:2;/b.py:h:4 1\nmain;x\\x1b (y:1) 3\n";
    static const char *const bits[] = { ";", " ", "(", ")", ":", "\n", "\\x", "-", "0",
                                        "9007199254740991", "tid:", "P9;T", "\r", "\t" };
    char buf[sizeof seed + 64];
    uint64_t state = 0x2545F4914F6CDD1Dull, accepted = 0;
    for (int i = 0; i < 3000; i++) {
        size_t len = sizeof seed - 1;
        memcpy(buf, seed, len);
        for (int k = 0; k < 3; k++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            size_t at = (size_t)(state >> 8) % len;
            const char *bit = bits[(state >> 40) % (sizeof bits / sizeof bits[0])];
            size_t n = strlen(bit);
            if ((state & 3) == 0)
                len = at + 1;                         /* cut */
            else if ((state & 3) == 1)
                buf[at] = (char)(state >> 32);        /* any byte */
            else if (len + n <= sizeof buf) {                /* a separator or number */
                memmove(buf + at + n, buf + at, len - at);
                memcpy(buf + at, bit, n);
                len += n;
            }
        }
        loaded l;
        load_text(&l, buf, len);
        check(l.rc == 0 || (l.rc == -1 && l.err[0]), "mutation %d: a message", i);
        if (l.rc == 0) {
            accepted++;
            sonde_buf b;
            sonde_buf_init(&b);
            sonde_collapsed_write(&b, &l.p, &l.s, NULL);
            sonde_buf_free(&b);
        }
        unload(&l);
    }
    check(accepted > 100, "some mutations load (%llu)", (unsigned long long)accepted);
}

void test_collapsed_read(void)
{
    test_sonde_dialect();
    test_pyspy_dialect();
    test_colon_dialects();
    test_plain_dialect();
    test_frame_rules();
    test_refusals();
    test_mutations();
}
