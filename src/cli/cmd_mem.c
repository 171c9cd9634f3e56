/* cmd_mem.c - sonde mem: what each line of the chosen functions allocates
 * and keeps, RSS over time, and what is alive at the end (replaces
 * memory_profiler and mprof).
 *
 * The program runs under the launcher's mem tool (python/sonde/_mem.py;
 * the accounting is src/mem, its interpreter side src/ext/mem), with the C allocator shim
 * (src/shim) preloaded unless --no-native; the tool leaves its figures
 * as JSON.  This side checks the command line, prints the table on
 * stderr, copies the JSON to -o, draws --plot and passes the program's
 * exit code on. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "../report/mem_plot.h"
#include "../report/mem_table.h"
#include "commands.h"
#include "launcher.h"
#include "options.h"
#include "tool_args.h"

typedef struct mem_opts {
    tool_args a;
    const char *plot;
    double interval;
    long sample_bytes;
    int native, line_events;
} mem_opts;

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "FILE", .type = CLI_OUTPUT,
      .offset = offsetof(mem_opts, a.out),
      .help = "write the figures and the timeline as JSON" },
    TOOL_ARGS_FUNCTION(mem_opts, a),
    { .long_name = "interval", .arg = "MS", .type = CLI_REAL,
      .offset = offsetof(mem_opts, interval), .min = 0.1, .max = 3.6e6,
      .what = "takes milliseconds from 0.1 to 3600000",
      .help = "how often RSS is read for the timeline (default 10)" },
    { .long_name = "native", .type = CLI_FLAG, .offset = offsetof(mem_opts, native), .set = 1,
      .help = "also count what C code allocates: malloc and its\n"
              "family, anonymous mmap (the default)" },
    { .long_name = "no-native", .type = CLI_FLAG, .offset = offsetof(mem_opts, native),
      .set = 0, .help = "only the Python allocators" },
    { .long_name = "sample-bytes", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(mem_opts, sample_bytes), .min = 0, .max = 1 << 30,
      .what = "is at most 1073741824",
      .help = "follow one block per N bytes allocated on average\n"
              "(default 512; blocks of 16 N and more are always\n"
              "followed; 0 follows every block)" },
    { .long_name = "lines", .type = CLI_FLAG, .offset = offsetof(mem_opts, line_events),
      .set = 1,
      .help = "follow every line of the chosen functions: exact at\n"
              "line boundaries and counts Occurrences, but slower\n"
              "(by default a line is placed by reading the stack\n"
              "at each sampled block)" },
    { .long_name = "plot", .arg = "SVG", .type = CLI_STRING, .offset = offsetof(mem_opts, plot),
      .help = "draw RSS and heap over time, with the functions' spans" },
    TOOL_ARGS_SUBPROCESSES(mem_opts, a),
    CLI_PROGRAM_OPTIONS(mem_opts, a.prog),
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_mem = {
    .name = "mem",
    .summary = "memory each line allocates and keeps, RSS over time (replaces memory_profiler)",
    .synopsis = "[-o FILE] [-f FUNC]... [--interval MS] [--native | --no-native]\n"
                "[--sample-bytes N] [--lines] [--plot SVG] [--subprocesses] [--python PY]\n"
                "(SCRIPT | -m MODULE | -c CODE) [ARGS...]",
    .about = "Runs a Python program and measures, for every line of the chosen functions,\n"
             "the bytes allocated and released while it ran (callees included), the bytes\n"
             "it allocated that are still alive at the end, and the RSS, then prints\n"
             "memory_profiler's table on stderr, followed by the allocations still alive\n"
             "at the end with the stacks that made them.\n"
             "\n"
             "Functions: those decorated with @profile, those named with -f, and when\n"
             "neither is given every function defined in the script (or in the code -c\n"
             "runs) and its top level.",
    .words = CLI_WORDS_END,
    .opts = option_table,
    .run = cmd_main,
};

/* The shim beside the package's extension, or "" when it is missing. */
static void shim_path(const sonde_env *env, char *out, size_t len)
{
    char pkg[PATH_MAX];
    out[0] = '\0';
    if (launch_package_dir(env, pkg, sizeof pkg) == 0 &&
        (size_t)snprintf(out, len, "%s/sonde/libsonde_alloc.so", pkg) < len &&
        access(out, R_OK) != 0)
        out[0] = '\0';
}

/* What draw() makes besides the table. */
typedef struct mem_draw {
    const cli_output *plot;   /* --plot, checked; its name NULL when not asked */
} mem_draw;

/* memory_profiler's table of the launcher's document, and --plot. */
static int draw(sonde_buf *table, const sonde_jtree *doc, void *ctx)
{
    const mem_draw *o = ctx;
    char err[256];
    if (sonde_mem_table_write(table, doc, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    if (!o->plot->name)
        return 0;
    sonde_buf svg;
    sonde_buf_init(&svg);
    int rc = sonde_mem_plot_write(&svg, doc, err, sizeof err) < 0
                 ? cli_fail(SONDE_EXIT_FAILED, "cannot draw %s: %s", o->plot->name, err)
                 : cli_output_write(o->plot, &svg);
    sonde_buf_free(&svg);
    return rc;
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    mem_opts o = { .interval = 10, .sample_bytes = 512, .native = 1 };
    cli_output plot = { .name = NULL };
    int rc = tool_args_parse(&o.a, &cmd_mem, argc, argv, &o);
    if (rc == 0)
        rc = cli_output_open(&plot, o.plot);
    char shim[PATH_MAX] = "";
    if (rc == 0 && o.native) {
        shim_path(env, shim, sizeof shim);
        if (!shim[0])
            rc = cli_fail(SONDE_EXIT_FAILED, "the C allocator shim libsonde_alloc.so is missing "
                          "beside sonde's package: run 'make' again, or use --no-native");
    }
    if (rc != 0) {
        tool_args_free(&o.a);
        return cli_exit(rc);
    }
    sonde_buf options;
    sonde_buf_init(&options);
    sonde_buf_printf(&options, "{\"functions\": [%s], \"interval_ms\": %.17g, "
                     "\"sample_bytes\": %ld, \"line_events\": %s, \"children\": %s}",
                     o.a.functions.data ? o.a.functions.data : "", o.interval, o.sample_bytes,
                     o.line_events ? "true" : "false", o.a.subprocesses ? "true" : "false");
    launcher_program prog = {
        .python = launch_python(env, o.a.prog.python), .tool = "mem", .format = "",
        .options = options.data, .mode = o.a.prog.mode, .target = o.a.prog.target,
        .args = o.a.prog.args, .nargs = o.a.prog.nargs, .preload = shim[0] ? shim : NULL,
        .children = o.a.subprocesses,
    };
    mem_draw how = { .plot = &plot };
    rc = sonde_buf_ok(&options) ? tool_args_run(&o.a, env, &prog, draw, &how)
                                : cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_buf_free(&options);
    tool_args_free(&o.a);
    return rc;
}
