/* test_formats.c - the table of formats: what each is called, what it
 * needs, and its promise that a format needing no stats writes the same
 * without them. */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "formats/format.h"
#include "harness.h"

static void test_table_of_formats(void)
{
    check(sonde_format_find("pstats") && !sonde_format_find("pstats")->needs_tree, "pstats");
    check(sonde_format_find("collapsed") && sonde_format_find("collapsed")->needs_tree,
          "collapsed needs the tree");
    check(sonde_format_find("table") == NULL, "table is no file format");
    check(sonde_format_find("speedscope") && sonde_format_find("speedscope")->needs_tree,
          "speedscope needs the tree");
    const sonde_format *dot = sonde_format_find("dot");
    check(dot && !dot->needs_tree && dot->needs_stats, "dot draws the stats' call graph");
    check_str(sonde_format_names(),
              "pstats, collapsed, json, speedscope, flamegraph, chrome, tensorboard, dot, gecko, "
              "pprof");
}

/* The table's promise: a format that does not need the stats writes the
 * same without them (s == NULL). */
static void test_formats_without_stats(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    char names[256];
    snprintf(names, sizeof names, "%s", sonde_format_names());
    int without = 0;
    for (char *name = strtok(names, ", "); name; name = strtok(NULL, ", ")) {
        const sonde_format *f = sonde_format_find(name);
        check(f != NULL, "%s is in the table", name);
        if (!f || f->needs_stats)
            continue;
        sonde_buf a, b;
        sonde_buf_init(&a);
        sonde_buf_init(&b);
        check(f->write(&a, &p, &s, NULL) == 0 && f->write(&b, &p, NULL, NULL) == 0,
              "%s written", name);
        check(a.len > 0 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
              "%s the same without stats", name);
        sonde_buf_free(&a);
        sonde_buf_free(&b);
        without++;
    }
    check_u64(without, 7); /* collapsed, speedscope, flamegraph, chrome, tensorboard, gecko,
                              pprof */
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

void test_formats(void)
{
    test_table_of_formats();
    test_formats_without_stats();
}
