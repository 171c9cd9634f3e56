/* cmd_report.c - sonde report: print or convert a profile file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/stats.h"
#include "../formats/format.h"
#include "../formats/json_read.h"
#include "../formats/lines_table.h"
#include "../formats/load.h"
#include "../formats/table.h"
#include "commands.h"
#include "options.h"

static const char usage[] =
    "usage: sonde report FILE [-s KEY] [-l N] [--callers RE] [--callees RE]\n"
    "                         [-f FORMAT] [-o OUT]\n"
    "\n"
    "Prints the pstats-style table of a .prof file written by sonde run or by\n"
    "cProfile (python -m cProfile -o FILE), or converts it with -f; prints the\n"
    "line table of a file written by sonde lines -o.\n"
    "\n"
    "  -s, --sort KEY     tottime, cumtime (default), ncalls, pcalls, name, file, line\n"
    "  -l, --limit N      rows to show (default 30; 0 = all)\n"
    "      --callers RE   who called the functions matching RE, with counts\n"
    "      --callees RE   what the functions matching RE called\n"
    "  -f, --format FMT   table (default), pstats or json\n"
    "  -o, --output OUT   where -f writes (default: standard output)\n";

/* A sonde lines profile: prints its table and returns 0 (or 1 on a
 * malformed one); -1 when the file is not one (the .prof path decides). */
static int print_lines(const char *file, char *err, size_t errlen)
{
    size_t len;
    unsigned char *data = sonde_load_bytes(file, &len, err, errlen);
    sonde_jtree t;
    int rc = -1;
    if (data && sonde_load_is_json(data, len) &&
        sonde_json_read(&t, (const char *)data, len, err, errlen) == 0) {
        if (sonde_lines_is(&t)) {
            sonde_buf b;
            sonde_buf_init(&b);
            rc = sonde_lines_table(&b, &t, NULL, err, errlen) < 0
                     ? cli_fail(SONDE_EXIT_FAILED, "cannot read '%s': %s", file, err)
                     : sonde_buf_write_file(&b, "-") < 0 ? SONDE_EXIT_FAILED : 0;
            sonde_buf_free(&b);
        }
        sonde_jtree_free(&t);
    }
    free(data);
    return rc;
}

int cmd_report(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    sonde_table_opts topts = { .sort = "cumtime", .limit = 30 };
    const char *file = NULL, *format = "table", *out = "-", *limit = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (cli_flag(a, "-h", "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if ((r = cli_option(argc, argv, &i, "-s", "--sort", &topts.sort)) ||
            (r = cli_option(argc, argv, &i, "-l", "--limit", &limit)) ||
            (r = cli_option(argc, argv, &i, "-f", "--format", &format)) ||
            (r = cli_option(argc, argv, &i, "-o", "--output", &out)) ||
            (r = cli_option(argc, argv, &i, NULL, "--callers", &topts.callers_re)) ||
            (r = cli_option(argc, argv, &i, NULL, "--callees", &topts.callees_re))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        if (a[0] == '-' && a[1])
            return cli_usage_error("report", "unknown option '%s'", a);
        if (file)
            return cli_usage_error("report", "one file at a time ('%s' and '%s')", file, a);
        file = a;
    }
    if (!file)
        return cli_usage_error("report", "which file? give a .prof file");
    if (limit && cli_count("report", "-l", limit, &topts.limit) < 0)
        return SONDE_EXIT_USAGE;
    if (!sonde_table_sort_known(topts.sort))
        return cli_usage_error("report", "unknown sort key '%s' (use tottime, cumtime, "
                               "ncalls, pcalls, name, file or line)", topts.sort);
    const sonde_format *fmt = NULL;
    if (strcmp(format, "table") != 0) {
        fmt = sonde_format_find(format);
        if (!fmt)
            return cli_usage_error("report", "unknown format '%s' (use table, %s)", format,
                                   sonde_format_names());
        if (fmt->needs_tree || fmt->needs_timeline)
            return cli_fail(SONDE_EXIT_FAILED, "a .prof file has no call tree, so it cannot "
                            "become '%s': write it from the run itself (sonde run -f %s -o "
                            "FILE)", format, format);
    }

    char err[512];
    int lines = print_lines(file, err, sizeof err);
    if (lines >= 0)
        return lines;

    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_stats_init(&s);
    int rc = 0;
    sonde_buf b;
    sonde_buf_init(&b);
    if (sonde_load_file(file, &p, &s, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else if (!fmt) {
        if (sonde_table_write(&b, &p, &s, &topts, err, sizeof err) < 0)
            rc = cli_usage_error("report", "%s", err);
    } else if (fmt->write(&b, &p, &s) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    if (rc == 0 && sonde_buf_write_file(&b, out) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "cannot write '%s': %s", out, strerror(errno));
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    return rc;
}
