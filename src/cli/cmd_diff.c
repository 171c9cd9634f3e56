/* cmd_diff.c - sonde diff: two profiles of one program (before and after
 * a change): the functions whose own time changed most, and a page with
 * the newer profile's flame graph coloured by how much each frame grew
 * (red) or shrank (blue). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/diff.h"
#include "../formats/load.h"
#include "../page/view.h"
#include "commands.h"
#include "options.h"

static const char usage[] =
    "usage: sonde diff BEFORE AFTER [-o OUT.html] [-l N]\n"
    "\n"
    "Compares two profiles of the same program (.prof files from sonde run or\n"
    "cProfile, or sonde's JSON): prints the functions whose own time changed\n"
    "most, and writes a page (as sonde view does) whose flame graph is AFTER's,\n"
    "each frame coloured by how much it grew (red) or shrank (blue) against the\n"
    "same call path in BEFORE.\n"
    "\n"
    "  -o, --output OUT   the page (default: AFTER with .diff.html for its extension)\n"
    "  -l, --limit N      rows to print (default 20; 0 = all)\n";

typedef struct loaded {
    sonde_profile p;
    sonde_stats s;
} loaded;

static int load(const char *file, loaded *l)
{
    char err[512];
    if (sonde_load_file(file, &l->p, &l->s, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

int cmd_diff(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    const char *files[2] = { NULL, NULL }, *out = NULL, *limit_text = NULL;
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_flag(argv[i], "-h", "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if ((r = cli_option(argc, argv, &i, "-o", "--output", &out)) ||
            (r = cli_option(argc, argv, &i, "-l", "--limit", &limit_text))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("diff", "unknown option '%s'", argv[i]);
        if (nfiles == 2)
            return cli_usage_error("diff", "two profiles: BEFORE and AFTER");
        files[nfiles++] = argv[i];
    }
    if (nfiles < 2)
        return cli_usage_error("diff", "give two profiles: BEFORE and AFTER");
    long limit = 20;
    if (limit_text && cli_count("diff", "-l", limit_text, &limit) < 0)
        return SONDE_EXIT_USAGE;
    char path[PATH_MAX];
    int rc;
    if (!out && (rc = cli_sibling_path(files[1], ".diff.html", path, sizeof path)) != 0)
        return rc;
    out = out ? out : path;
    loaded before, after;
    sonde_stats_init(&before.s);
    sonde_stats_init(&after.s);
    if (sonde_profile_init(&before.p) < 0 || sonde_profile_init(&after.p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    rc = load(files[0], &before);
    if (rc == 0)
        rc = load(files[1], &after);
    sonde_buf table, page;
    sonde_buf_init(&table);
    sonde_buf_init(&page);
    sonde_diff d;
    memset(&d, 0, sizeof d);
    if (rc == 0 && sonde_diff_compute(&d, &before.p, &before.s, &after.p, &after.s) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (rc == 0) {
        char title[2 * PATH_MAX];
        snprintf(title, sizeof title, "%s -> %s", files[0], files[1]);
        sonde_diff_table_write(&table, &d, (uint32_t)limit);
        sonde_view_side sides[2] = {
            { &before.p, &before.s, sonde_load_has_tree(&before.p) },
            { &after.p, &after.s, sonde_load_has_tree(&after.p) },
        };
        if (sonde_view_diff_write(&page, title, &sides[0], &sides[1], &d) < 0 ||
            !sonde_buf_ok(&table))
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    if (rc == 0)
        rc = cli_write(&page, out);
    if (rc == 0) {
        sonde_buf_write_file(&table, "-");
        fprintf(stderr, "sonde: wrote %s (the flame graph of %s, coloured by change)\n", out,
                files[1]);
    }
    sonde_diff_free(&d);
    sonde_buf_free(&table);
    sonde_buf_free(&page);
    sonde_stats_free(&before.s);
    sonde_profile_free(&before.p);
    sonde_stats_free(&after.s);
    sonde_profile_free(&after.p);
    return rc;
}
