/* test_about.c - what a profile says of its run (core/about.h): its time
 * written and read back, and the whole of it through sonde's JSON
 * (profile and documents) and pprof's comments, exactly; an "about" that
 * is not what it should be is refused with a message. */
#include <stdlib.h>
#include <string.h>

#include "core/about.h"
#include "fixture.h"
#include "formats/format.h"
#include "formats/json_about.h"
#include "formats/json_profile.h"
#include "formats/pprof.h"
#include "harness.h"

static void test_time(void)
{
    char text[SONDE_ABOUT_TIME_LEN];
    int64_t ns = 1795713728123456000; /* 2026-11-26T17:22:08.123456Z */
    sonde_about_time_format(ns, text);
    check_str(text, "2026-11-26T17:22:08.123456Z");
    int64_t back = 0;
    check(sonde_about_time_parse(text, &back) == 0 && back == ns, "time read back");
    check(sonde_about_time_parse("2026-11-26T17:22:08Z", &back) == 0 &&
          back == 1795713728000000000, "a time without a fraction");
    const char *bad[] = { "", "yesterday", "2026-11-26 17:22:08Z", "2026-13-01T00:00:00Z",
                          "2026-11-26T17:22:08.1", "2026-11-26T17:22:08.1Z+" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check(sonde_about_time_parse(bad[i], &back) < 0, "'%s' is no time", bad[i]);
}

/* An about with every field, and arguments a shell would have to quote. */
static void fill(sonde_about *a)
{
    const char *argv[] = { "/usr/bin/python3", "-c", "print('a b')", "", "<b>x</b> & \"y\"",
                           "caf\xc3\xa9", "back\\slash" };
    for (size_t i = 0; i < sizeof argv / sizeof argv[0]; i++)
        sonde_about_add_arg(a, argv[i], strlen(argv[i]));
    const char *exe = "/opt/py 3/bin/python3", *version = "3.8.18 (default)\n[GCC 12.2.0]";
    const char *verdict = "CPU-bound: the CPU was busy 98% of the wall time";
    sonde_about_set(&a->executable, exe, strlen(exe));
    sonde_about_set(&a->version, version, strlen(version));
    sonde_about_set(&a->verdict, verdict, strlen(verdict));
    sonde_about_set(&a->cwd, "/home/me/my project", strlen("/home/me/my project"));
    a->start_ns = 1795713728123456000;
    a->wall = 1.25;
    a->cpu = 0.75;
    a->processes = 3;
}

static void check_same(const sonde_about *got, const sonde_about *want, const char *how)
{
    check(got->argc == want->argc, "%s: %u arguments, want %u", how, got->argc, want->argc);
    for (uint32_t i = 0; i < got->argc && i < want->argc; i++)
        check_str(got->argv[i], want->argv[i]);
    check_str(got->executable, want->executable);
    check_str(got->version, want->version);
    check_str(got->verdict, want->verdict);
    check_str(got->cwd, want->cwd);
    check(got->start_ns == want->start_ns, "%s: the start", how);
    check(got->wall == want->wall && got->cpu == want->cpu, "%s: wall %g cpu %g", how,
          got->wall, got->cpu);
    check(got->processes == want->processes, "%s: processes", how);
}

static void test_json_profile(void)
{
    sonde_profile p, back;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    fill(&p.about);
    p.pid = 4242;
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_json_write(&b, &p, &s, NULL) == 0, "json written");
    check(strstr(b.data, "\"about\": {\"argv\": [\"/usr/bin/python3\", \"-c\"") != NULL,
          "about after the envelope:\n%s", b.data);
    check(strstr(b.data, "\\u003cb\\u003ex") != NULL, "markup escaped");
    sonde_jtree t;
    char err[200] = "";
    sonde_profile_init(&back);
    int ok = sonde_json_read(&t, b.data, b.len, err, sizeof err) == 0;
    check(ok && sonde_json_profile_read(&t, &back, err, sizeof err) == 0, "read back: %s", err);
    if (ok)
        sonde_jtree_free(&t);
    check_same(&back.about, &p.about, "json");
    check(back.pid == 4242, "pid read back");
    sonde_profile_free(&back);

    /* speedscope's name is the command line, quoted as a shell takes it */
    b.len = 0;
    check(sonde_speedscope_write(&b, &p, &s, NULL) == 0, "speedscope written");
    check(strstr(b.data, "\"name\": \"/usr/bin/python3 -c 'print('\\\\''a b'\\\\'')' '' "
                         "'\\u003cb\\u003ex\\u003c/b\\u003e \\u0026 \\\"y\\\"'") != NULL,
          "speedscope's name:\n%.400s", b.data);

    /* pprof: time, duration and comments, read back */
    b.len = 0;
    check(sonde_pprof_write(&b, &p, &s, NULL) == 0, "pprof written");
    sonde_profile_init(&back);
    check(sonde_pprof_read((const uint8_t *)b.data, b.len, &back, err, sizeof err) == 0,
          "pprof read back: %s", err);
    check_str(back.about.version, "3.8.18 (default) [GCC 12.2.0]"); /* a comment is one line */
    sonde_about_set(&back.about.version, p.about.version, strlen(p.about.version));
    check_same(&back.about, &p.about, "pprof");
    check(back.pid == 4242, "pprof's pid");
    sonde_profile_free(&back);

    /* a profile that says nothing of its run writes no "about" */
    sonde_about_clear(&p.about);
    p.pid = 0;
    b.len = 0;
    sonde_json_write(&b, &p, &s, NULL);
    check(strstr(b.data, "\"about\"") == NULL, "no about");
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* A lines document gets its about after the envelope; an old one without
 * reads as nothing known; a malformed one is refused. */
static void test_documents(void)
{
    static const char doc[] = "{\"sonde\": 1, \"mode\": \"lines\", \"functions\": []}\n";
    sonde_about a, back;
    sonde_about_init(&a);
    sonde_about_init(&back);
    fill(&a);
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_json_about_insert(&b, doc, sizeof doc - 1, &a, 0);
    sonde_jtree t;
    char err[200] = "";
    check(sonde_json_read(&t, b.data, b.len, err, sizeof err) == 0, "%s", err);
    check(sonde_json_get(&t, &t.vals[t.root], "functions") != NULL, "the rest kept");
    check(sonde_json_about_read(&t, &t.vals[t.root], &back, NULL, err, sizeof err) == 0, "%s",
          err);
    check_same(&back, &a, "document");
    sonde_jtree_free(&t);
    sonde_about_clear(&back);
    /* no envelope: the text as it is */
    b.len = 0;
    sonde_json_about_insert(&b, "[1]", 3, &a, 0);
    check_str(b.data, "[1]");

    static const char *const bad[][2] = {
        { "{\"about\": 3}", "\"about\" is not an object" },
        { "{\"about\": {\"argv\": [\"a\", 1]}}", "\"about\": \"argv\" is not a list of strings" },
        { "{\"about\": {\"start\": \"yesterday\"}}", "\"about\": \"start\" is not a time" },
        { "{\"about\": {\"wall_s\": -1}}", "\"about\": \"wall_s\" is not a number" },
        { "{\"about\": {\"executable\": [\"x\"]}}", "\"about\": \"executable\" is not a string" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sonde_about_init(&back);
        err[0] = '\0';
        int read = sonde_json_read(&t, bad[i][0], strlen(bad[i][0]), err, sizeof err) == 0;
        check(read && sonde_json_about_read(&t, &t.vals[t.root], &back, NULL, err,
                                             sizeof err) < 0 &&
              strncmp(err, bad[i][1], strlen(bad[i][1])) == 0,
              "%s: '%s'", bad[i][0], err);
        if (read)
            sonde_jtree_free(&t);
        sonde_about_clear(&back);
    }
    sonde_about_clear(&a);
    sonde_buf_free(&b);
}

void test_about(void)
{
    test_time();
    test_json_profile();
    test_documents();
}
