/* cmd_report.c - sonde report: print or convert a profile file. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/merge.h"
#include "../core/stats.h"
#include "../core/time_tree_graft.h"
#include "../formats/format.h"
#include "../formats/json_read.h"
#include "../formats/load.h"
#include "../formats/pprof.h"
#include "../report/lines_table.h"
#include "../report/mem_plot.h"
#include "../report/mem_table.h"
#include "../report/ops_table.h"
#include "../report/table.h"
#include "commands.h"
#include "inputs.h"
#include "launch.h"
#include "options.h"
#include "output.h"

typedef struct report_opts {
    const char *format, *out;
    sonde_table_opts table;
    double node_thres, edge_thres;  /* -f dot, svg, png */
    int short_paths;
    long min_count;          /* -1 when not given */
    int ops, by_caller, by_shape, by_step; /* --ops, --by-caller, --by-shape, --by-step */
    int by_process;          /* --by-process */
} report_opts;

static const cli_opt option_table[] = {
    { .short_name = 's', .long_name = "sort", .arg = "KEY", .type = CLI_STRING,
      .offset = offsetof(report_opts, table.sort),
      .help = "tottime, cumtime (default), ncalls, pcalls, name, file, line" },
    { .short_name = 'l', .long_name = "limit", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(report_opts, table.limit), .help = "rows to show (default 30; 0 = all)" },
    { .long_name = "callers", .arg = "RE", .type = CLI_STRING,
      .offset = offsetof(report_opts, table.callers_re),
      .help = "who called the functions matching RE, with counts\n"
              "(printed instead of the table, as pstats' print_callers)" },
    { .long_name = "callees", .arg = "RE", .type = CLI_STRING,
      .offset = offsetof(report_opts, table.callees_re),
      .help = "what the functions matching RE called (idem)" },
    { .long_name = "ops", .type = CLI_FLAG, .offset = offsetof(report_opts, ops), .set = 1,
      .help = "the PyTorch operator table (sonde run --torch), as\n"
              "key_averages().table() prints it; -s cpu_time_total\n"
              "(default), self_cpu_time_total, count, cpu_time, name,\n"
              "with a GPU self_cuda_time_total, cuda_time_total, ...;\n"
              "with memory cpu_memory_usage, ..." },
    { .long_name = "by-caller", .type = CLI_FLAG, .offset = offsetof(report_opts, by_caller),
      .set = 1,
      .help = "--ops: a row per operator and Python function that\n"
              "ran it (needs the tree: sonde run --torch -f json)" },
    { .long_name = "by-shape", .type = CLI_FLAG, .offset = offsetof(report_opts, by_shape),
      .set = 1,
      .help = "--ops: a row per operator and input shapes\n"
              "(recorded by sonde run --torch-shapes)" },
    { .long_name = "by-step", .type = CLI_FLAG, .offset = offsetof(report_opts, by_step),
      .set = 1,
      .help = "--ops: a row per operator and training step, step by\n"
              "step (-l: rows of each step; from sonde run --torch\n"
              "-f json)" },
    { .long_name = "by-process", .type = CLI_FLAG, .offset = offsetof(report_opts, by_process),
      .set = 1,
      .help = "--ops: a table per process (a rank of a distributed\n"
              "job), then all together (--subprocesses, merge)" },
    { .short_name = 'f', .long_name = "format", .arg = "FMT", .type = CLI_STRING,
      .offset = offsetof(report_opts, format),
      .help = "table (default), pstats, json, collapsed, speedscope,\n"
              "flamegraph, pprof (these from a JSON or pprof profile),\n"
              "dot: the call graph as gprof2dot draws it, svg or png:\n"
              "that graph drawn by Graphviz; for a mem profile svg is\n"
              "its timeline and pprof a heap profile" },
    { .long_name = "node-thres", .arg = "P", .type = CLI_REAL,
      .offset = offsetof(report_opts, node_thres), .min = 0, .max = 100,
      .what = "takes a percentage from 0 to 100",
      .help = "leave out functions under P% of the time (dot; 0.5)" },
    { .long_name = "edge-thres", .arg = "P", .type = CLI_REAL,
      .offset = offsetof(report_opts, edge_thres), .min = 0, .max = 100,
      .what = "takes a percentage from 0 to 100",
      .help = "leave out calls under P% of the time (dot; 0.1)" },
    { .long_name = "short-paths", .type = CLI_FLAG, .offset = offsetof(report_opts, short_paths),
      .set = 1,
      .help = "collapsed: file names as py-spy shows them (below\n"
              "site-packages or lib/pythonX.Y, or relative to here)" },
    { .long_name = "min-count", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(report_opts, min_count),
      .help = "collapsed: leave out stacks counting less than N\n"
              "(microseconds of own time, or samples)" },
    { .short_name = 'o', .long_name = "output", .arg = "OUT", .type = CLI_STRING,
      .offset = offsetof(report_opts, out),
      .help = "where -f writes (default: standard output)" },
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_report = {
    .name = "report",
    .summary = "print or convert a profile file (sonde's, cProfile's, pprof)",
    .synopsis = "FILE... [-s KEY] [-l N] [--callers RE] [--callees RE]\n"
                "[--ops [--by-caller] [--by-shape] [--by-step] [--by-process]]\n"
                "[-f FORMAT] [--node-thres P] [--edge-thres P]\n"
                "[--short-paths] [--min-count N] [-o OUT]",
    .about = "Prints the pstats-style table of a .prof file (written by sonde run or by\n"
             "cProfile: python -m cProfile -o FILE), of sonde's JSON profile or of a\n"
             "pprof file (sonde's, Go's: gzipped or not), or converts it with -f.\n"
             "Prints the table of a file written by sonde lines -o or sonde mem -o (-f svg\n"
             "draws a mem profile's memory over time, -f pprof makes it a heap profile),\n"
             "and line_profiler's table of a .lprof file (kernprof -l, dump_stats).\n"
             "Several files of one kind are summed first, as sonde merge sums them.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

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
    int drawn = !mem ? sonde_lines_table_write(b, t, NULL, err, sizeof err)
                : svg ? sonde_mem_plot_write(b, t, err, sizeof err)
                : pprof ? sonde_pprof_mem_write(b, t, err, sizeof err)
                      : sonde_mem_table_write(b, t, err, sizeof err);
    return drawn < 0 ? cli_fail(SONDE_EXIT_FAILED, "cannot read '%s': %s", file, err) : 0;
}

/* Whether format is one Graphviz draws from -f dot's source. */
static int graphviz_format(const char *format)
{
    return strcmp(format, "svg") == 0 || strcmp(format, "png") == 0;
}

/* Graphviz's dot turns the DOT source in b into `format` at out. */
static int run_graphviz(const sonde_buf *b, const char *format, const char *out)
{
    char src[] = "/tmp/sonde-dot-XXXXXX", type[16];
    int fd = mkstemp(src);
    if (fd < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot write a temporary file: %s", strerror(errno));
    close(fd);
    cli_output dot = { .name = src };
    snprintf(dot.path, sizeof dot.path, "%s", src);
    if (cli_output_write(&dot, b) != 0) {
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

/* The command line into *o and *file, checked, -o included.  0, or an
 * exit code. */
static int parse(int argc, char **argv, report_opts *o, cli_words *words, cli_output *out)
{
    int rc = cli_parse(&cmd_report, argc, argv, o, words);
    if (rc != 0)
        return rc;
    if (words->count == 0)
        return cli_usage_error("report", "which file? give a .prof file");
    if ((o->short_paths || o->min_count >= 0) && strcmp(o->format, "collapsed") != 0)
        return cli_usage_error("report", "--short-paths and --min-count go with -f collapsed");
    if ((o->by_caller || o->by_shape || o->by_step || o->by_process) && !o->ops)
        return cli_usage_error("report", "--by-caller, --by-shape, --by-step and --by-process go "
                               "with --ops");
    if (o->ops && (strcmp(o->format, "table") != 0 || o->table.callers_re ||
                   o->table.callees_re))
        return cli_usage_error("report", "--ops prints a table: it goes with neither -f, "
                               "--callers nor --callees");
    if (o->ops && !sonde_ops_sort_known(o->table.sort))
        return cli_usage_error("report", "unknown sort key '%s' for --ops (use %s)",
                               o->table.sort, sonde_ops_sort_names);
    if (!o->ops && !sonde_table_sort_known(o->table.sort))
        return cli_usage_error("report", "unknown sort key '%s' (use tottime, cumtime, ncalls, "
                               "pcalls, name, file or line)", o->table.sort);
    if (strcmp(o->format, "table") != 0 && !graphviz_format(o->format) &&
        !sonde_format_find(o->format))
        return cli_usage_error("report", "unknown format '%s' (use table, svg, png, %s)",
                               o->format, sonde_format_names());
    return cli_output_open(out, o->out);
}

/* A .prof has no call tree: the one rebuilt from its callers (as the page
 * draws it) becomes p's, saying so when its bounds left branches out.  0,
 * or -1 on out of memory. */
static int graft_rebuilt_tree(const char *file, sonde_profile *p, const sonde_stats *s)
{
    int cut = 0;
    if (sonde_time_tree_graft(p, s, &cut) < 0)
        return -1;
    if (cut)
        fprintf(stderr, "sonde: '%s': the call tree rebuilt from its callers was cut at %u "
                "frames or %d deep; the smallest branches are left out\n", file,
                SONDE_TIME_TREE_MAX_NODES, SONDE_TIME_TREE_MAX_DEPTH);
    return 0;
}

/* --ops --by-process: a table per process frame of p (the operators
 * beneath it), each under its label, then a heading for the table of
 * them all, which the caller prints.  0, or an exit code after printing
 * why not. */
static int ops_by_process(sonde_buf *b, const sonde_profile *p, const sonde_ops_opts *all,
                          const char *file)
{
    char err[512];
    int processes = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        if (!sonde_merge_is_process(p, f))
            continue;
        sonde_ops_opts one = *all;
        one.one_process = 1;
        one.process_func = f;
        sonde_buf_puts(b, processes++ ? "\n" : "");
        sonde_buf_text_str(b, sonde_profile_str(p, p->funcs[f].name));
        sonde_buf_putc(b, '\n');
        if (sonde_ops_table_write(b, p, NULL, &one, err, sizeof err) == 0)
            continue;
        if (strncmp(err, "no PyTorch operators", 20) != 0)
            return cli_fail(SONDE_EXIT_FAILED, "%s", err);
        sonde_buf_puts(b, "(no PyTorch operators in this process)\n");
    }
    if (!processes)
        return cli_fail(SONDE_EXIT_FAILED, "'%s' holds one process: --by-process needs a profile "
                        "of several (sonde run --torch --subprocesses, sonde merge)", file);
    sonde_buf_puts(b, "\nall processes\n");
    return 0;
}

/* What the files become, into b (or written to out, by a format that
 * streams).  0, or an exit code after printing why not. */
static int convert(const sonde_env *env, const report_opts *o, const cli_words *files,
                   const cli_output *out, sonde_buf *b, int *written, int *graphviz)
{
    cli_inputs in;
    int rc = cli_inputs_load(env, "report", files->word, files->count, NULL, &in);
    if (rc != 0) {
        cli_inputs_free(&in);
        return rc;
    }
    const char *file = files->word[0];
    enum sonde_load_kind kind = in.kind;
    char err[512], cwd[PATH_MAX];
    sonde_format_opts fopts = { .short_paths = o->short_paths, .cwd = getcwd(cwd, sizeof cwd),
                                .min_count = o->min_count > 0 ? (uint64_t)o->min_count : 0,
                                .node_thres = o->node_thres, .edge_thres = o->edge_thres };
    const sonde_format *fmt = sonde_format_find(*graphviz ? "dot" : o->format);
    sonde_format_job job = { .format = fmt, .profile = &in.p, .stats = &in.s, .opts = &fopts };
    if (kind != SONDE_LOADED_PROFILE) {
        rc = draw_document(b, file, &in.doc, kind, o->format);
        *graphviz = 0; /* a mem document's svg is its own timeline */
    } else if (fmt && fmt->needs_tree && !fmt->needs_timeline && !sonde_load_has_tree(&in.p) &&
               graft_rebuilt_tree(file, &in.p, &in.s) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    } else if (fmt && ((fmt->needs_timeline && !in.p.nevents) ||
                       (fmt->needs_tree && !sonde_load_has_tree(&in.p)))) {
        rc = cli_fail(SONDE_EXIT_FAILED, "'%s' has no %s, so it cannot become '%s': write it "
                      "from the run itself (sonde run -f %s -o FILE, or sonde record)", file,
                      fmt->needs_timeline ? "timeline" : "call tree", o->format, o->format);
    } else if (*graphviz) {
        if (fmt->write(b, &in.p, &in.s, &fopts) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    } else if (fmt) {
        rc = cli_output_fill(out, sonde_format_fill, &job);
        *written = 1;
    } else if (o->ops) {
        sonde_ops_opts oo = { .sort = o->table.sort, .limit = o->table.limit,
                              .by_caller = o->by_caller, .by_shape = o->by_shape,
                              .by_step = o->by_step };
        if (o->by_process)
            rc = ops_by_process(b, &in.p, &oo, file);
        if (rc == 0 && sonde_ops_table_write(b, &in.p, &in.s, &oo, err, sizeof err) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else {
        sonde_stats_count_samples(&in.s, in.p.sample_rate); /* a sampled run's table counts samples */
        if (sonde_table_write(b, &in.p, &in.s, &o->table, err, sizeof err) < 0)
            rc = cli_usage_error("report", "%s", err);
    }
    cli_inputs_free(&in);
    return rc;
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    report_opts o = { .format = "table", .out = "-", .table = { .sort = "cumtime", .limit = 30 },
                      .node_thres = sonde_format_opts_or_default(NULL)->node_thres,
                      .edge_thres = sonde_format_opts_or_default(NULL)->edge_thres,
                      .min_count = -1 };
    cli_words files;
    cli_output out;
    int rc = parse(argc, argv, &o, &files, &out);
    if (rc != 0)
        return cli_exit(rc);
    int written = 0, graphviz = graphviz_format(o.format);
    sonde_buf b;
    sonde_buf_init(&b);
    rc = convert(env, &o, &files, &out, &b, &written, &graphviz);
    if (rc == 0 && !written)
        rc = graphviz ? run_graphviz(&b, o.format, out.path) : cli_output_write(&out, &b);
    sonde_buf_free(&b);
    return rc;
}
