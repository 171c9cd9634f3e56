/* cmd_report.c - sonde report: print or convert a profile file. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/stats.h"
#include "../formats/dot.h"
#include "../formats/format.h"
#include "../formats/json_read.h"
#include "../formats/lines_table.h"
#include "../formats/load.h"
#include "../formats/mem_plot.h"
#include "../formats/mem_table.h"
#include "../formats/pprof.h"
#include "../formats/table.h"
#include "commands.h"
#include "launch.h"
#include "options.h"

static const char usage[] =
    "usage: sonde report FILE [-s KEY] [-l N] [--callers RE] [--callees RE]\n"
    "                         [-f FORMAT] [--node-thres P] [--edge-thres P]\n"
    "                         [--short-paths] [--min-count N] [-o OUT]\n"
    "\n"
    "Prints the pstats-style table of a .prof file (written by sonde run or by\n"
    "cProfile: python -m cProfile -o FILE), of sonde's JSON profile or of a\n"
    "pprof file (sonde's, Go's: gzipped or not), or converts it with -f.\n"
    "Prints the table of a file written by sonde lines -o or sonde mem -o (-f svg\n"
    "draws a mem profile's memory over time).\n"
    "\n"
    "  -s, --sort KEY     tottime, cumtime (default), ncalls, pcalls, name, file, line\n"
    "  -l, --limit N      rows to show (default 30; 0 = all)\n"
    "      --callers RE   who called the functions matching RE, with counts\n"
    "                     (printed instead of the table, as pstats' print_callers)\n"
    "      --callees RE   what the functions matching RE called (idem)\n"
    "  -f, --format FMT   table (default), pstats, json, collapsed, speedscope,\n"
    "                     flamegraph, pprof (these from a JSON or pprof profile),\n"
    "                     dot: the call graph as gprof2dot draws it, svg or png:\n"
    "                     that graph drawn by Graphviz; for a mem profile svg is\n"
    "                     its timeline and pprof a heap profile\n"
    "      --node-thres P leave out functions under P%% of the time (dot; 0.5)\n"
    "      --edge-thres P leave out calls under P%% of the time (dot; 0.1)\n"
    "      --short-paths  collapsed: file names as py-spy shows them (below\n"
    "                     site-packages or lib/pythonX.Y, or relative to here)\n"
    "      --min-count N  collapsed: leave out stacks counting less than N\n"
    "                     (microseconds of own time, or samples)\n"
    "  -o, --output OUT   where -f writes (default: standard output)\n";

/* A sonde lines or mem document drawn into b: its table, or with -f svg a
 * mem document's timeline, with -f pprof a mem document as a heap
 * profile.  0, or an exit code after printing why. */
static int draw_document(sonde_buf *b, const char *file, const sonde_jtree *t,
                         enum sonde_load_kind kind, const char *format)
{
    int mem = kind == SONDE_LOADED_MEM, svg = strcmp(format, "svg") == 0;
    int pprof = strcmp(format, "pprof") == 0;
    if (strcmp(format, "table") != 0 && !(mem && (svg || pprof)))
        return cli_usage_error("report", "a %s profile becomes a table%s, not '%s'", mem ? "mem"
                               : "lines", mem ? " or svg (its timeline) or pprof" : "", format);
    char err[256];
    int drawn = !mem ? sonde_lines_table(b, t, NULL, err, sizeof err)
                : svg ? sonde_mem_plot(b, t, err, sizeof err)
                : pprof ? sonde_pprof_write_mem(b, t, err, sizeof err)
                      : sonde_mem_table(b, t, err, sizeof err);
    return drawn < 0 ? cli_fail(SONDE_EXIT_FAILED, "cannot read '%s': %s", file, err) : 0;
}

/* A threshold in percent (0-100) into *out, when given. */
static int parse_percent(const char *flag, const char *text, double *out)
{
    if (!text)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= 0 && v <= 100)) {
        cli_usage_error("report", "%s takes a percentage from 0 to 100, not '%s'", flag, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* Graphviz's dot turns the DOT source in b into `format` at out. */
static int run_graphviz(const sonde_buf *b, const char *format, const char *out)
{
    char src[] = "/tmp/sonde-dot-XXXXXX", type[16];
    int fd = mkstemp(src);
    if (fd < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot write a temporary file: %s", strerror(errno));
    close(fd);
    if (cli_write(b, src) != 0) {
        unlink(src);
        return SONDE_EXIT_FAILED;
    }
    snprintf(type, sizeof type, "-T%s", format);
    char *argv[] = { "dot", type, src, "-o", (char *)out, NULL };
    if (strcmp(out, "-") == 0)
        argv[3] = NULL;
    pid_t pid = launch_start(argv);
    int status = 0, rc = 0;
    if (pid < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "-f %s needs Graphviz's dot, which did not run (%s): "
                      "install it (apt-get install graphviz) or use -f dot", format,
                      strerror(errno));
    else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "Graphviz's dot failed making %s", format);
    unlink(src);
    return rc;
}

int cmd_report(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    sonde_table_opts topts = { .sort = "cumtime", .limit = 30 };
    sonde_dot_opts dopts = { 0.5, 0.1 };
    const char *file = NULL, *format = "table", *out = "-", *limit = NULL;
    const char *node_thres = NULL, *edge_thres = NULL, *min_count = NULL;
    sonde_format_opts fopts = { 0, NULL, 0 };
    char cwd[PATH_MAX];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (cli_flag(a, "-h", "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (cli_flag(a, NULL, "--short-paths")) {
            fopts.short_paths = 1;
            continue;
        }
        if ((r = cli_option(argc, argv, &i, "-s", "--sort", &topts.sort)) ||
            (r = cli_option(argc, argv, &i, NULL, "--min-count", &min_count)) ||
            (r = cli_option(argc, argv, &i, "-l", "--limit", &limit)) ||
            (r = cli_option(argc, argv, &i, "-f", "--format", &format)) ||
            (r = cli_option(argc, argv, &i, "-o", "--output", &out)) ||
            (r = cli_option(argc, argv, &i, NULL, "--callers", &topts.callers_re)) ||
            (r = cli_option(argc, argv, &i, NULL, "--callees", &topts.callees_re)) ||
            (r = cli_option(argc, argv, &i, NULL, "--node-thres", &node_thres)) ||
            (r = cli_option(argc, argv, &i, NULL, "--edge-thres", &edge_thres))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        if ((r = cli_one_file("report", a, &file)) != 0)
            return r;
    }
    if (!file)
        return cli_usage_error("report", "which file? give a .prof file");
    if (limit && cli_count("report", "-l", limit, &topts.limit) < 0)
        return SONDE_EXIT_USAGE;
    long count = 0;
    if (min_count && cli_count("report", "--min-count", min_count, &count) < 0)
        return SONDE_EXIT_USAGE;
    fopts.min_count = (uint64_t)count;
    if ((fopts.short_paths || min_count) && strcmp(format, "collapsed") != 0)
        return cli_usage_error("report", "--short-paths and --min-count go with -f collapsed");
    fopts.cwd = getcwd(cwd, sizeof cwd);
    if (!sonde_table_sort_known(topts.sort))
        return cli_usage_error("report", "unknown sort key '%s' (use tottime, cumtime, "
                               "ncalls, pcalls, name, file or line)", topts.sort);
    int graphviz = strcmp(format, "svg") == 0 || strcmp(format, "png") == 0;
    int dot = graphviz || strcmp(format, "dot") == 0;
    const sonde_format *fmt = NULL;
    if (strcmp(format, "table") != 0 && !dot && !(fmt = sonde_format_find(format)))
        return cli_usage_error("report", "unknown format '%s' (use table, dot, svg, png, %s)",
                               format, sonde_format_names());
    if (dot && (parse_percent("--node-thres", node_thres, &dopts.node_thres) < 0 ||
                parse_percent("--edge-thres", edge_thres, &dopts.edge_thres) < 0))
        return SONDE_EXIT_USAGE;

    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_stats_init(&s);
    sonde_jtree doc;
    enum sonde_load_kind kind;
    char err[512];
    int rc = 0, written = 0;
    sonde_buf b;
    sonde_buf_init(&b);
    if (sonde_load_any(file, &p, &s, &doc, &kind, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else if (kind != SONDE_LOADED_PROFILE) {
        rc = draw_document(&b, file, &doc, kind, format);
        graphviz = 0; /* a mem document's svg is its own timeline */
        sonde_jtree_free(&doc);
    } else if (fmt && (fmt->needs_timeline || (fmt->needs_tree && !sonde_load_has_tree(&p)))) {
        rc = cli_fail(SONDE_EXIT_FAILED, "'%s' has no %s, so it cannot become '%s': write it "
                      "from the run itself (sonde run -f %s -o FILE, or sonde record)", file,
                      fmt->needs_timeline ? "timeline" : "call tree", format, format);
    } else if (dot) {
        if (sonde_dot_write(&b, &p, &s, &dopts) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    } else if (!fmt) {
        if (sonde_table_write(&b, &p, &s, &topts, err, sizeof err) < 0)
            rc = cli_usage_error("report", "%s", err);
    } else if (sonde_format_write_file(fmt, out, &p, &s, &fopts, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else {
        written = 1;
    }
    if (rc == 0 && !written)
        rc = graphviz ? run_graphviz(&b, format, out) : cli_write(&b, out);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    return rc;
}
