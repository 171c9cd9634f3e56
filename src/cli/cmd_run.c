/* cmd_run.c - sonde run: deterministic profile of a whole Python program.
 *
 * Starts the program under the launcher (launcher.h), which records every
 * call and leaves the stats, and the profile in the format -o asks for,
 * in its private folder; then prints the pstats-style table and the
 * resource verdict on stderr, keeping the program's own stdout untouched,
 * copies the profile to -o, and exits with the program's exit code. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/stats.h"
#include "../core/verdict.h"
#include "../formats/format.h"
#include "../formats/load.h"
#include "../formats/table.h"
#include "commands.h"
#include "launcher.h"
#include "options.h"

static const char usage[] =
    "usage: sonde run [-o FILE] [-f FORMAT] [-s KEY] [-l N] [--python PY]\n"
    "                 (SCRIPT | -m MODULE | -c CODE) [ARGS...]\n"
    "\n"
    "Runs a Python program, records every call of every thread (Python and C\n"
    "functions, as cProfile names them), then prints the pstats-style table\n"
    "and a resource summary with a verdict (CPU-bound, waiting, memory) on\n"
    "stderr.  The program's arguments, output and exit code are its own.\n"
    "\n"
    "  -o, --output FILE  write the profile (kept even after Ctrl-C or a crash\n"
    "                     of the program)\n"
    "  -f, --format FMT   pstats (default; pstats.Stats, snakeviz, gprof2dot),\n"
    "                     collapsed (flame graph stacks, microseconds), json,\n"
    "                     speedscope, flamegraph (interactive SVG) or pprof\n"
    "                     (go tool pprof, Pyroscope, Parca)\n"
    "  -s, --sort KEY     tottime, cumtime (default), ncalls, pcalls, name, file, line\n"
    "  -l, --limit N      rows to show (default 30; 0 = all)\n"
    "      --python PY    interpreter to run the program with (default:\n"
    "                     $SONDE_PYTHON, else python3)\n";

typedef struct run_opts {
    const char *out, *format, *sort, *python;
    long limit;
    const char *mode, *target;   /* script / module / code */
    int first_arg;               /* index of the program's first argument */
} run_opts;

static int parse(int argc, char **argv, run_opts *o)
{
    const char *limit = NULL;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (cli_flag(a, "-h", "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (cli_flag(a, "-m", NULL) || cli_flag(a, "-c", NULL)) {
            if (i + 1 >= argc)
                return cli_usage_error("run", "%s needs a %s", a,
                                       a[1] == 'm' ? "module name" : "piece of code");
            o->mode = a[1] == 'm' ? "module" : "code";
            o->target = argv[++i];
            i++;
            break;
        }
        if ((r = cli_option(argc, argv, &i, "-o", "--output", &o->out)) ||
            (r = cli_option(argc, argv, &i, "-f", "--format", &o->format)) ||
            (r = cli_option(argc, argv, &i, "-s", "--sort", &o->sort)) ||
            (r = cli_option(argc, argv, &i, "-l", "--limit", &limit)) ||
            (r = cli_option(argc, argv, &i, NULL, "--python", &o->python))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("run", "unknown option '%s'", a);
        }
        if (i >= argc)
            break;
        o->mode = "script";
        o->target = argv[i++];
        break;
    }
    o->first_arg = i;
    if (!o->target)
        return cli_usage_error("run", "what should run? give a script, -m MODULE or -c CODE");
    if (limit && cli_count("run", "-l", limit, &o->limit) < 0)
        return SONDE_EXIT_USAGE;
    if (!sonde_table_sort_known(o->sort))
        return cli_usage_error("run", "unknown sort key '%s' (use tottime, cumtime, ncalls, "
                               "pcalls, name, file or line)", o->sort);
    const sonde_format *fmt = sonde_format_find(o->format);
    if (!fmt)
        return cli_usage_error("run", "unknown format '%s' (use %s)", o->format,
                               sonde_format_names());
    if (fmt->needs_timeline)
        return cli_usage_error("run", "'%s' is a timeline of samples: record one with "
                               "sonde record -f %s", o->format, o->format);
    return 0;
}

static int check_inputs(const run_opts *o)
{
    if (strcmp(o->mode, "script") == 0) {
        struct stat st;
        if (stat(o->target, &st) < 0)
            return cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': %s", o->target, strerror(errno));
        if (S_ISDIR(st.st_mode))
            return cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': it is a folder; give a "
                            "script, or -m MODULE", o->target);
        if (access(o->target, R_OK) < 0)
            return cli_fail(SONDE_EXIT_USAGE, "cannot read '%s': %s", o->target, strerror(errno));
    }
    return o->out ? cli_check_writable(o->out) : 0;
}

static double seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static sonde_usage usage_of(const launch_result *r)
{
    const struct rusage *u = &r->usage;
    sonde_usage s = {
        .wall = r->wall,
        .user = seconds(u->ru_utime),
        .sys = seconds(u->ru_stime),
        .children_cpu = r->children_cpu,
        .run_delay = r->run_delay,
        .max_rss_kb = u->ru_maxrss,
        .major_faults = u->ru_majflt,
        .minor_faults = u->ru_minflt,
        .voluntary_switches = u->ru_nvcsw,
        .involuntary_switches = u->ru_nivcsw,
    };
    return s;
}

/* Prints the table and the verdict from the stats the launcher wrote,
 * then copies the profile to -o.  0, or SONDE_EXIT_FAILED after printing
 * why the table or -o could not be made. */
static int report(const run_opts *o, const launcher_session *run)
{
    char stats_path[PATH_MAX];
    if (launcher_path(run, "stats", stats_path, sizeof stats_path) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "the temporary folder's name is too long");
    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_stats_init(&s);
    char err[512];
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_table_opts topts = { .sort = o->sort, .limit = o->limit };
    int rc = sonde_load_file(stats_path, &p, &s, err, sizeof err);
    if (rc == 0)
        rc = sonde_table_write(&b, &p, &s, &topts, err, sizeof err);
    if (rc < 0) {
        cli_fail(0, "%s", err);
    } else {
        sonde_buf_putc(&b, '\n');
        sonde_usage u = usage_of(&run->result);
        sonde_verdict_write(&b, &u, &p, &s);
        cli_report(&b);
    }
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    if (o->out) {
        if (launcher_deliver(run, "out", o->out) < 0)
            return SONDE_EXIT_FAILED;
        sonde_buf_init(&b);
        sonde_buf_printf(&b, "profile:   %s (%s)\n", o->out, o->format);
        cli_report(&b);
        sonde_buf_free(&b);
    }
    return rc < 0 ? SONDE_EXIT_FAILED : 0;
}

int cmd_run(int argc, char **argv, const sonde_env *env)
{
    run_opts o = { .format = "pstats", .sort = "cumtime", .limit = 30 };
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = check_inputs(&o)) != 0)
        return rc;
    launcher_program prog = {
        .python = launch_python(env, o.python), .tool = "run", .format = o.out ? o.format : "",
        .options = "{}", .mode = o.mode, .target = o.target, .args = argv + o.first_arg,
        .nargs = argc - o.first_arg,
    };
    launcher_session run;
    if (launcher_run(env, &prog, "stats", &run) == LAUNCHER_PROFILE)
        rc = report(&o, &run);
    launcher_close(&run);
    int code = launcher_exit_code(&run);
    return code == 0 ? rc : code;
}
