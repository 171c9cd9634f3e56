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
#include "../formats/mem_plot.h"
#include "../formats/mem_table.h"
#include "../formats/table.h"
#include "commands.h"
#include "options.h"

static const char usage[] =
    "usage: sonde report FILE [-s KEY] [-l N] [--callers RE] [--callees RE]\n"
    "                         [-f FORMAT] [-o OUT]\n"
    "\n"
    "Prints the pstats-style table of a .prof file written by sonde run or by\n"
    "cProfile (python -m cProfile -o FILE), or converts it with -f; prints the\n"
    "table of a file written by sonde lines -o or sonde mem -o (-f svg draws a\n"
    "mem profile's memory over time).\n"
    "\n"
    "  -s, --sort KEY     tottime, cumtime (default), ncalls, pcalls, name, file, line\n"
    "  -l, --limit N      rows to show (default 30; 0 = all)\n"
    "      --callers RE   who called the functions matching RE, with counts\n"
    "      --callees RE   what the functions matching RE called\n"
    "  -f, --format FMT   table (default), pstats, json, ...; svg for a mem profile\n"
    "  -o, --output OUT   where -f writes (default: standard output)\n";

/* A sonde lines or mem profile (JSON): prints its table, or with -f svg
 * draws a mem profile's timeline, and returns 0 (or an exit code when it
 * is malformed or cannot be written); -1 when the file is not one (the
 * .prof path decides). */
static int report_line_profile(const char *file, const char *format, const char *out,
                               char *err, size_t errlen)
{
    size_t len;
    unsigned char *data = sonde_load_bytes(file, &len, err, errlen);
    sonde_jtree t;
    int rc = -1;
    if (data && sonde_load_is_json(data, len) &&
        sonde_json_read(&t, (const char *)data, len, err, errlen) == 0) {
        int lines = sonde_lines_is(&t), mem = sonde_mem_is(&t), svg = strcmp(format, "svg") == 0;
        sonde_buf b;
        sonde_buf_init(&b);
        if ((lines || mem) && strcmp(format, "table") != 0 && !(mem && svg)) {
            rc = cli_usage_error("report", "a %s profile becomes a table%s, not '%s'",
                                 mem ? "mem" : "lines", mem ? " or svg (its timeline)" : "",
                                 format);
        } else if (lines || mem) {
            int drawn = lines  ? sonde_lines_table(&b, &t, NULL, err, errlen)
                        : svg ? sonde_mem_plot(&b, &t, err, errlen)
                              : sonde_mem_table(&b, &t, err, errlen);
            rc = drawn < 0 ? cli_fail(SONDE_EXIT_FAILED, "cannot read '%s': %s", file, err)
                 : sonde_buf_write_file(&b, out) < 0
                     ? cli_fail(SONDE_EXIT_FAILED, "cannot write '%s': %s", out, strerror(errno))
                     : 0;
        }
        sonde_buf_free(&b);
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
    char err[512];
    int line_profile = report_line_profile(file, format, out, err, sizeof err);
    if (line_profile >= 0)
        return line_profile;

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
