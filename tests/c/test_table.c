/* test_table.c - the pstats-style text table: golden rows, sort orders,
 * --callers/--callees, bad keys and expressions, function labels. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"
#include "report/table.h"

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

static void test_table_rows(void)
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

static void test_labels(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    check_label(&p, "~", 0, "<x>", "{x}", __LINE__);
    check_label(&p, "~", 0, "<>", "{}", __LINE__);
    check_label(&p, "~", 0, "len", "len", __LINE__);
    check_label(&p, "~", 4, "<x>", "~:4(<x>)", __LINE__);
    check_label(&p, "a.py", 0, "<module>", "a.py:0(<module>)", __LINE__);
    sonde_profile_free(&p);
}

void test_table(void)
{
    test_table_rows();
    test_labels();
}
