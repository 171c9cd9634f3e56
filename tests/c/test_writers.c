/* test_writers.c - golden output of the collapsed, json and table writers. */
#include <stdlib.h>
#include <string.h>

#include "formats/format.h"
#include "formats/table.h"
#include "fixture.h"
#include "harness.h"

static int compare_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* text with its lines sorted: collapsed stacks have no defined order. */
static char *sorted_lines(const char *text)
{
    size_t len = strlen(text), n = 0;
    char *copy = malloc(len + 1), *out = malloc(len + 1);
    char **lines = malloc((len + 1) * sizeof *lines);
    memcpy(copy, text, len + 1);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
        lines[n++] = line;
    qsort(lines, n, sizeof *lines, compare_lines);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        strcat(strcat(out, lines[i]), "\n");
    free(lines);
    free(copy);
    return out;
}

/* Two threads merge; a ';' in a qualname becomes ':'; main;glue has no
 * self time of its own, so only its child's stack is written. */
static void test_collapsed(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    fixture_app_funcs(&p);
    uint32_t glue = sonde_profile_func(&p, "app.py", 20, "glue", "a;b", SONDE_FUNC_PYTHON);
    p.seconds_per_tick = 1e-6;
    uint32_t root = fixture_thread(&p, 1, 0, "MainThread");
    uint32_t main = fixture_node(&p, root, FIXTURE_MAIN, 1, 40, 10);
    fixture_node(&p, fixture_node(&p, main, FIXTURE_WORK, 2, 25, 18), FIXTURE_LEN, 4, 7, 7);
    fixture_node(&p, fixture_node(&p, main, glue, 1, 5, 0), FIXTURE_LEN, 1, 5, 5);
    root = fixture_thread(&p, 2, 0, "worker");
    fixture_node(&p, fixture_node(&p, root, FIXTURE_MAIN, 1, 12, 2), FIXTURE_WORK, 1, 10, 10);

    sonde_stats s;
    sonde_stats_init(&s);
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_write_collapsed(&b, &p, &s, NULL) == 0, "collapsed");
    char *got = sorted_lines(b.data ? b.data : "");
    char *want = sorted_lines(
        "main (app.py:1) 12\n"
        "main (app.py:1);Worker.work (app.py:5) 28\n"
        "main (app.py:1);Worker.work (app.py:5);<built-in method builtins.len> (~:0) 7\n"
        "main (app.py:1);a:b (app.py:20);<built-in method builtins.len> (~:0) 5\n");
    check_str(got, want);
    free(got);
    free(want);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

static const char json_want[] =
    "{\"sonde\": 1, \"mode\": \"run\", \"unit\": \"seconds\",\n"
    "\"functions\": [\n"
    "  {\"name\": \"main\", \"qualname\": \"main\", \"file\": \"app.py\", \"line\": 1, "
    "\"kind\": \"python\"},\n"
    "  {\"name\": \"work\", \"qualname\": \"Worker.work\", \"file\": \"app.py\", \"line\": 5, "
    "\"kind\": \"python\"},\n"
    "  {\"name\": \"\\u003cbuilt-in method builtins.len\\u003e\", "
    "\"qualname\": \"\\u003cbuilt-in method builtins.len\\u003e\", \"file\": \"~\", "
    "\"line\": 0, \"kind\": \"c\"}],\n"
    "\"threads\": [{\"ident\": 1, \"native_id\": 100, \"name\": \"MainThread\", \"root\": 1}, "
    "{\"ident\": 2, \"native_id\": 0, \"name\": \"pool \\\"A\\\"\", \"root\": 5}],\n"
    "\"nodes\": [\n"
    "  [-1, 0, 0, 0, 0],\n"
    "  [-1, 0, 0, 0, 0],\n"
    "  [0, 1, 1, 10, 2.5],\n"
    "  [1, 2, 2, 7.5, 6],\n"
    "  [2, 3, 4, 1.5, 1.5],\n"
    "  [-1, 0, 0, 0, 0],\n"
    "  [1, 5, 1, 2, 1.5],\n"
    "  [1, 6, 1, 0.5, 0.5]],\n"
    "\"stats\": [\n"
    "  {\"function\": 0, \"ncalls\": 1, \"pcalls\": 1, \"tottime\": 2.5, \"cumtime\": 10, "
    "\"callers\": []},\n"
    "  {\"function\": 1, \"ncalls\": 4, \"pcalls\": 3, \"tottime\": 8, \"cumtime\": 9.5, "
    "\"callers\": [[0, 2, 2, 6, 7.5], [1, 1, 1, 0.5, 0.5]]},\n"
    "  {\"function\": 2, \"ncalls\": 4, \"pcalls\": 4, \"tottime\": 1.5, \"cumtime\": 1.5, "
    "\"callers\": [[1, 4, 4, 1.5, 1.5]]}]\n"
    "}\n";

static void test_json(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    const sonde_format *fmt = sonde_format_find("json");
    check(fmt && !fmt->needs_tree && fmt->write(&b, &p, &s, NULL) == 0, "json writer");
    check_str(b.data, json_want);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

#define TABLE_TOP \
    "           9 function calls (8 primitive calls) in 12.000 seconds\n\n"
#define TABLE_HEADER \
    "\n   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n"
#define ROW_WORK "      4/3    8.000    2.000    9.500    3.167 app.py:5(work)\n"
#define ROW_MAIN "        1    2.500    2.500   10.000   10.000 app.py:1(main)\n"
#define ROW_LEN "        4    1.500    0.375    1.500    0.375 {built-in method builtins.len}\n"
#define CALLERS_TITLE "\nFunction was called by...    ncalls  tottime  cumtime  caller\n"
#define CALLEES_TITLE "\nFunction called...    ncalls  tottime  cumtime  callee\n"

/* The table for these options; NULL (and the message in err) on error. */
static char *table(const sonde_profile *p, const sonde_stats *s, sonde_table_opts o,
                   char *err, size_t errlen)
{
    sonde_buf b;
    sonde_buf_init(&b);
    if (sonde_table_write(&b, p, s, &o, err, errlen) < 0) {
        sonde_buf_free(&b);
        return NULL;
    }
    return b.data;
}

static void test_table(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    char err[256];

    char *got = table(&p, &s, (sonde_table_opts){ .sort = "tottime", .callers_re = "work",
                                                  .callees_re = "work" }, err, sizeof err);
    /* --callers / --callees print only what they ask for, as pstats'
     * print_callers does; without them, the table. */
    check_str(got,
              CALLERS_TITLE "app.py:5(work)\n"
              "    <-                    2    6.000    7.500  app.py:1(main)\n"
              "    <-                    1    0.500    0.500  app.py:5(work)\n"
              CALLEES_TITLE "app.py:5(work)\n"
              "    ->                    4    1.500    1.500  {built-in method builtins.len}\n"
              "    ->                    1    0.500    0.500  app.py:5(work)\n");
    free(got);

    /* By call count: work and len tie at 4, cumtime breaks the tie. */
    got = table(&p, &s, (sonde_table_opts){ .sort = "calls", .limit = 2, .callers_re = "main",
                                            .callees_re = "len" }, err, sizeof err);
    check_str(got,
              CALLERS_TITLE "app.py:1(main)\n    (no profiled caller)\n"
              CALLEES_TITLE "{built-in method builtins.len}\n    (calls nothing profiled)\n");
    free(got);

    got = table(&p, &s, (sonde_table_opts){ .sort = "name", .callers_re = "nomatch" }, err,
                sizeof err);
    check_str(got, "\nNo function matches 'nomatch'.\n");
    free(got);

    got = table(&p, &s, (sonde_table_opts){ .sort = "calls", .limit = 2 }, err, sizeof err);
    check_str(got, TABLE_TOP "   Ordered by: call count\n"
                   "   List reduced from 3 to 2 due to restriction <2>\n" TABLE_HEADER
                   ROW_WORK ROW_LEN);
    free(got);
    got = table(&p, &s, (sonde_table_opts){ .sort = "name" }, err, sizeof err);
    check_str(got, TABLE_TOP "   Ordered by: function name\n" TABLE_HEADER
                   ROW_LEN ROW_MAIN ROW_WORK);
    free(got);

    check(table(&p, &s, (sonde_table_opts){ .sort = "bogus" }, err, sizeof err) == NULL &&
          strstr(err, "unknown sort key 'bogus'"), "bad sort key: %s", err);
    check(table(&p, &s, (sonde_table_opts){ .sort = "cumtime", .callers_re = "(" }, err,
                sizeof err) == NULL &&
          strstr(err, "bad regular expression '('"), "bad regex: %s", err);
    check(sonde_table_sort_known("cumulative") && !sonde_table_sort_known("bogus"),
          "sort aliases");
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

static void check_label(sonde_profile *p, const char *file, int line, const char *name,
                        const char *want, int at)
{
    uint32_t f = sonde_profile_func(p, file, line, name, NULL, SONDE_FUNC_C);
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_table_func_label(&b, p, f);
    check_str_at(b.data, want, "label", __FILE__, at);
    sonde_buf_free(&b);
}

static void test_labels_and_formats(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    check_label(&p, "~", 0, "<x>", "{x}", __LINE__);
    check_label(&p, "~", 0, "<>", "{}", __LINE__);
    check_label(&p, "~", 0, "len", "len", __LINE__);
    check_label(&p, "~", 4, "<x>", "~:4(<x>)", __LINE__);
    check_label(&p, "a.py", 0, "<module>", "a.py:0(<module>)", __LINE__);
    sonde_profile_free(&p);

    check(sonde_format_find("pstats") && !sonde_format_find("pstats")->needs_tree, "pstats");
    check(sonde_format_find("collapsed") && sonde_format_find("collapsed")->needs_tree,
          "collapsed needs the tree");
    check(sonde_format_find("table") == NULL, "table is no file format");
    check(sonde_format_find("speedscope") && sonde_format_find("speedscope")->needs_tree,
          "speedscope needs the tree");
    check_str(sonde_format_names(),
              "pstats, collapsed, json, speedscope, flamegraph, chrome, pprof");
}

void test_writers(void)
{
    test_collapsed();
    test_json();
    test_table();
    test_labels_and_formats();
}
