/* cmd_mem.c - sonde mem: what each line of the chosen functions allocates
 * and keeps, RSS over time, and what is alive at the end (replaces
 * memory_profiler and mprof).
 *
 * The program runs under the launcher's mem tool (python/sonde/_mem.py;
 * the bookkeeping is src/ext/mem_*.c), with the C allocator shim
 * (src/shim) preloaded unless --no-native; the tool leaves its figures
 * as JSON.  This side checks the command line, prints the table on
 * stderr, copies the JSON to -o, draws --plot and passes the program's
 * exit code on. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../report/mem_plot.h"
#include "../report/mem_table.h"
#include "commands.h"
#include "launcher.h"
#include "options.h"
#include "tool_args.h"

static const char usage[] =
    "usage: sonde mem [-o FILE] [-f FUNC]... [--interval MS] [--native | --no-native]\n"
    "                 [--sample-bytes N] [--lines] [--plot SVG] [--python PY]\n"
    "                 (SCRIPT | -m MODULE) [ARGS...]\n"
    "\n"
    "Runs a Python program and measures, for every line of the chosen functions,\n"
    "the bytes allocated and released while it ran (callees included), the bytes\n"
    "it allocated that are still alive at the end, and the RSS, then prints\n"
    "memory_profiler's table on stderr, followed by the allocations still alive\n"
    "at the end with the stacks that made them.\n"
    "\n"
    "Functions: those decorated with @profile, those named with -f, and when\n"
    "neither is given every function defined in the script and its top level.\n"
    "\n"
    "  -f, --function F    a qualified name or pattern (Class.method, work*), or\n"
    "                      module:qualname for a module the program imports\n"
    "      --interval MS   how often RSS is read for the timeline (default 10)\n"
    "      --native        also count what C code allocates: malloc and its\n"
    "                      family, anonymous mmap (the default)\n"
    "      --no-native     only the Python allocators\n"
    "      --sample-bytes N  follow one block per N bytes allocated on average\n"
    "                      (default 512; blocks of 16 N and more are always\n"
    "                      followed; 0 follows every block)\n"
    "      --lines         follow every line of the chosen functions: exact at\n"
    "                      line boundaries and counts Occurrences, but slower\n"
    "                      (by default a line is placed by reading the stack\n"
    "                      at each sampled block)\n"
    "  -o, --output FILE   write the figures and the timeline as JSON\n"
    "      --plot SVG      draw RSS and heap over time, with the functions' spans\n"
    "      --python PY     interpreter to run the program with\n";

typedef struct mem_opts {
    const char *interval, *sample_bytes, *plot;
    int native, line_events;
} mem_opts;

static int mem_option(int argc, char **argv, int *i, void *ctx)
{
    mem_opts *o = ctx;
    if (cli_flag(argv[*i], NULL, "--native") || cli_flag(argv[*i], NULL, "--no-native")) {
        o->native = strcmp(argv[*i], "--native") == 0;
        return 1;
    }
    if (cli_flag(argv[*i], NULL, "--lines")) {
        o->line_events = 1;
        return 1;
    }
    int r;
    if ((r = cli_option(argc, argv, i, NULL, "--interval", &o->interval)) ||
        (r = cli_option(argc, argv, i, NULL, "--sample-bytes", &o->sample_bytes)) ||
        (r = cli_option(argc, argv, i, NULL, "--plot", &o->plot)))
        return r < 0 ? SONDE_EXIT_USAGE : 1;
    return 0;
}

/* --interval's milliseconds into *ms.  0, or an exit code after printing. */
static int parse_interval(const char *text, double *ms)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= 0.1 && v <= 3.6e6))
        return cli_usage_error("mem", "--interval takes milliseconds from 0.1 to 3600000, "
                               "not '%s'", text);
    *ms = v;
    return 0;
}

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

/* memory_profiler's table of the launcher's document, and --plot. */
static int draw(sonde_buf *table, const sonde_jtree *doc, void *ctx)
{
    const mem_opts *o = ctx;
    char err[256];
    if (sonde_mem_table_write(table, doc, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    if (!o->plot)
        return 0;
    sonde_buf svg;
    sonde_buf_init(&svg);
    int rc = sonde_mem_plot_write(&svg, doc, err, sizeof err) < 0
                 ? cli_fail(SONDE_EXIT_FAILED, "cannot draw %s: %s", o->plot, err)
                 : cli_write(&svg, o->plot);
    sonde_buf_free(&svg);
    return rc;
}

int cmd_mem(int argc, char **argv, const sonde_env *env)
{
    mem_opts o = { NULL, NULL, NULL, 1, 0 };
    tool_args a;
    int rc = tool_args_parse(&a, argc, argv, usage, mem_option, &o);
    double interval = 10;
    long sample_bytes = 512;
    if (rc == 0 && o.interval)
        rc = parse_interval(o.interval, &interval);
    if (rc == 0 && o.sample_bytes &&
        (cli_count("mem", "--sample-bytes", o.sample_bytes, &sample_bytes) < 0 ||
         sample_bytes > (1l << 30)))
        rc = sample_bytes > (1l << 30)
                 ? cli_usage_error("mem", "--sample-bytes is at most 1073741824")
                 : SONDE_EXIT_USAGE;
    if (rc == 0 && o.plot)
        rc = cli_check_writable(o.plot);
    char shim[PATH_MAX] = "";
    if (rc == 0 && o.native) {
        shim_path(env, shim, sizeof shim);
        if (!shim[0])
            rc = cli_fail(SONDE_EXIT_FAILED, "the C allocator shim libsonde_alloc.so is missing "
                          "beside sonde's package: run 'make' again, or use --no-native");
    }
    if (rc != 0) {
        tool_args_free(&a);
        return rc < 0 ? 0 : rc;
    }
    sonde_buf options;
    sonde_buf_init(&options);
    sonde_buf_printf(&options, "{\"functions\": [%s], \"interval_ms\": %.17g, "
                     "\"sample_bytes\": %ld, \"line_events\": %s",
                     a.functions.data ? a.functions.data : "", interval, sample_bytes,
                     o.line_events ? "true" : "false");
    if (o.plot) {
        sonde_buf_puts(&options, ", \"plot\": ");
        sonde_buf_json_str(&options, o.plot);
    }
    sonde_buf_puts(&options, "}");
    launcher_program prog = {
        .python = launch_python(env, a.python), .tool = "mem", .format = "",
        .options = options.data, .mode = a.mode, .target = a.target, .args = a.args,
        .nargs = a.nargs, .preload = shim[0] ? shim : NULL,
    };
    rc = sonde_buf_ok(&options) ? tool_args_run(&a, env, &prog, draw, &o)
                                : cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_buf_free(&options);
    tool_args_free(&a);
    return rc;
}
