/* cmd_run.c - sonde run: deterministic profile of a whole Python program.
 *
 * Starts the program under the launcher (launcher.h), which records every
 * call and leaves the stats, and the profile in the format -o asks for,
 * in its private folder; then prints the pstats-style table and the
 * resource verdict on stderr, keeping the program's own stdout untouched,
 * copies the profile to -o, and exits with the program's exit code.  A
 * format with room for what was profiled (sonde's JSON, pprof,
 * speedscope) gets the run's command line, interpreter, start, wall and
 * CPU time and verdict here: the launcher leaves the profile as JSON, and
 * this side adds them or converts it. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/stats.h"
#include "../core/timeline.h"
#include "../report/verdict.h"
#include "../formats/format.h"
#include "../formats/load.h"
#include "../report/table.h"
#include "commands.h"
#include "launcher.h"
#include "options.h"
#include "output.h"
#include "run_children.h"

typedef struct run_opts {
    const char *out, *format, *sort;
    long limit, max_events;
    int torch, torch_shapes, torch_memory, torch_all_calls;
    const char *torch_steps;     /* --torch-steps [WAIT:]ACTIVE[:REPEAT] as given */
    long steps[3];               /* ... read: wait, active, repeat (0: every cycle) */
    cli_program prog;
    char trace_file[PATH_MAX];   /* -f tensorboard -o DIR: the file made in DIR ... */
    char trace_stem[PATH_MAX];   /* ... its name up to the nanoseconds, which a later
                                    cycle's file (--torch-steps) counts on from */
    long long trace_ns;
    int cycles_apart;            /* -o DIR: a file a cycle of --torch-steps */
    int subprocesses;            /* --subprocesses: the children the program forks too */
} run_opts;

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "FILE", .type = CLI_OUTPUT,
      .offset = offsetof(run_opts, out),
      .help = "write the profile (kept even after Ctrl-C or a crash\nof the program)" },
    { .short_name = 'f', .long_name = "format", .arg = "FMT", .type = CLI_STRING,
      .offset = offsetof(run_opts, format),
      .help = "pstats (default; pstats.Stats, snakeviz, gprof2dot),\n"
              "collapsed (flame graph stacks, microseconds), json,\n"
              "speedscope, flamegraph (interactive SVG), pprof\n"
              "(go tool pprof, Pyroscope, Parca) or, with --torch,\n"
              "chrome (a timeline of calls and operators for\n"
              "Perfetto, chrome://tracing) or tensorboard (-o DIR:\n"
              "a trace TensorBoard's PyTorch profiler reads)" },
    { .short_name = 's', .long_name = "sort", .arg = "KEY", .type = CLI_STRING,
      .offset = offsetof(run_opts, sort),
      .help = "tottime, cumtime (default), ncalls, pcalls, name, file, line" },
    { .short_name = 'l', .long_name = "limit", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(run_opts, limit), .help = "rows to show (default 30; 0 = all)" },
    { .long_name = "subprocesses", .type = CLI_FLAG, .set = 1,
      .offset = offsetof(run_opts, subprocesses),
      .help = "every child the program forks (os.fork, multiprocessing\n"
              "and concurrent.futures pools with fork) is profiled too,\n"
              "each under \"process PID (command)\"" },
    { .long_name = "torch", .type = CLI_FLAG, .set = 1, .offset = offsetof(run_opts, torch),
      .help = "add PyTorch operators and record_function regions\n"
              "beneath the Python calls that ran them (once the\n"
              "program imports torch)" },
    { .long_name = "torch-shapes", .type = CLI_FLAG, .set = 1,
      .offset = offsetof(run_opts, torch_shapes),
      .help = "--torch, each operator named with its input shapes\n"
              "(as record_shapes=True; report --ops --by-shape)" },
    { .long_name = "torch-memory", .type = CLI_FLAG, .set = 1,
      .offset = offsetof(run_opts, torch_memory),
      .help = "--torch, with the CPU bytes each operator allocated\n"
              "and released (as profile_memory=True; report --ops\n"
              "shows CPU Mem and Self CPU Mem from -f json)" },
    { .long_name = "torch-steps", .arg = "SPEC", .type = CLI_STRING,
      .offset = offsetof(run_opts, torch_steps),
      .help = "--torch, SPEC [W:]A[:R]: operators only in steps\n"
              "W+1 to W+A (ProfilerStep#W to #W+A-1; a step ends\n"
              "at each optimizer.step() or sonde.step()), R\n"
              "cycles of W+A steps (default 1; 0: every cycle to\n"
              "the end), as torch.profiler.schedule(wait=W,\n"
              "active=A, repeat=R); outside them torch's profiler\n"
              "is off; -f tensorboard -o DIR: a file a cycle, as\n"
              "torch's handler writes them" },
    { .long_name = "torch-all-calls", .type = CLI_FLAG, .set = 1,
      .offset = offsetof(run_opts, torch_all_calls),
      .help = "--torch -f chrome: every Python call in the trace,\n"
              "not only those that hold an operator or region" },
    { .long_name = "max-events", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(run_opts, max_events), .min = 1, .max = SONDE_MAX_SLICES,
      .what = "takes a number of events from 1 to 100000000",
      .help = "--torch -f chrome: the trace keeps the first N\n"
              "calls and operators (default 1000000), says how\n"
              "many it dropped" },
    CLI_PROGRAM_OPTIONS(run_opts, prog),
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_run = {
    .name = "run",
    .summary = "profile every call of a Python program (replaces cProfile)",
    .synopsis = "[-o FILE] [-f FORMAT] [-s KEY] [-l N] [--subprocesses]\n"
                "[--torch [--torch-shapes] [--torch-memory] [--torch-steps SPEC]\n"
                " [-f chrome|tensorboard [--max-events N] [--torch-all-calls]]]\n"
                "[--python PY] (SCRIPT | -m MODULE | -c CODE) [ARGS...]",
    .about = "Runs a Python program, records every call of every thread (Python and C\n"
             "functions, as cProfile names them), then prints the pstats-style table\n"
             "and a resource summary with a verdict (CPU-bound, waiting, memory) on\n"
             "stderr.  The program's arguments, output and exit code are its own.",
    .words = CLI_WORDS_END,
    .opts = option_table,
    .run = cmd_main,
};

/* -f tensorboard -o DIR: the name of cycle k's file (0 the first), its
 * nanoseconds k after the first's, so that they sort in the order of the
 * cycles.  0, or -1 when it does not fit. */
static int trace_file_of_cycle(const run_opts *o, int k, char *out, size_t len)
{
    int n = snprintf(out, len, "%s%lld.pt.trace.json", o->trace_stem, o->trace_ns + k);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* -f tensorboard -o DIR: the folder made (with its parents, as torch's
 * tensorboard_trace_handler makes it) and o->out pointed at a new file in
 * it named as that handler names its own: HOST_PID.NANOSECONDS.pt.trace.json
 * (the pid sonde's).  An -o that ends in .pt.trace.json is that file.  0,
 * or SONDE_EXIT_FAILED after printing why. */
static int trace_file_in(run_opts *o)
{
    static const char suffix[] = ".pt.trace.json";
    size_t len = strlen(o->out);
    if (len == 0)
        return cli_fail(SONDE_EXIT_FAILED, "-f tensorboard -o takes a folder: the name is empty");
    if (len >= sizeof suffix - 1 && strcmp(o->out + len - (sizeof suffix - 1), suffix) == 0)
        return 0;
    char dir[PATH_MAX], host[256] = "host";
    if (snprintf(dir, sizeof dir, "%s", o->out) >= (int)sizeof dir)
        return cli_fail(SONDE_EXIT_FAILED, "the folder name '%s' is too long", o->out);
    for (char *slash = dir + 1;; slash++) {
        char was = *slash;
        if (was != '/' && was != '\0')
            continue;
        *slash = '\0';
        if (mkdir(dir, 0777) < 0 && errno != EEXIST)
            return cli_fail(SONDE_EXIT_FAILED, "cannot make the folder '%s' for the trace: %s",
                            dir, strerror(errno));
        *slash = was;
        if (was == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return cli_fail(SONDE_EXIT_FAILED, "'%s' is not a folder: -f tensorboard -o takes the "
                        "folder TensorBoard's --logdir reads (or a FILE.pt.trace.json)", o->out);
    gethostname(host, sizeof host - 1);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    o->trace_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    if (snprintf(o->trace_stem, sizeof o->trace_stem, "%s%s%s_%d.", o->out,
                 dir[len - 1] == '/' ? "" : "/", host, (int)getpid()) >=
            (int)sizeof o->trace_stem - 40 ||
        trace_file_of_cycle(o, 0, o->trace_file, sizeof o->trace_file) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "the folder name '%s' is too long", o->out);
    o->out = o->trace_file;
    o->cycles_apart = 1;
    return 0;
}

/* --torch-steps [WAIT:]ACTIVE[:REPEAT] into o->steps.  0, or -1 when it
 * makes no sense. */
static int read_steps(run_opts *o)
{
    const char *at = o->torch_steps;
    long v[3];
    int n = 0;
    for (;;) {
        if (n == 3 || *at < '0' || *at > '9')
            return -1;
        long x = 0;
        for (; *at >= '0' && *at <= '9'; at++)
            if ((x = x * 10 + (*at - '0')) > 1000000000L)
                return -1;
        v[n++] = x;
        if (*at == '\0')
            break;
        if (*at++ != ':')
            return -1;
    }
    long wait = n >= 2 ? v[0] : 0, active = n >= 2 ? v[1] : v[0], repeat = n == 3 ? v[2] : 1;
    if (active < 1)
        return -1;
    o->steps[0] = wait;
    o->steps[1] = active;
    o->steps[2] = repeat;
    return 0;
}

/* The command line into *o, checked, -o included.  0, or an exit code. */
static int parse(int argc, char **argv, run_opts *o, cli_output *out)
{
    cli_words words;
    int rc = cli_parse(&cmd_run, argc, argv, o, &words);
    if (rc == 0)
        rc = cli_program_take(&o->prog, "run", &words);
    if (rc != 0)
        return rc;
    if (!sonde_table_sort_known(o->sort))
        return cli_usage_error("run", "unknown sort key '%s' (use tottime, cumtime, ncalls, "
                               "pcalls, name, file or line)", o->sort);
    const sonde_format *fmt = sonde_format_find(o->format);
    if (!fmt)
        return cli_usage_error("run", "unknown format '%s' (use %s)", o->format,
                               sonde_format_names());
    int torch = o->torch || o->torch_shapes;
    if (o->torch_memory && !torch)
        return cli_usage_error("run", "--torch-memory records operators' memory: add --torch");
    if (o->torch_all_calls && !torch)
        return cli_usage_error("run", "--torch-all-calls chooses the Python calls of a PyTorch "
                               "trace: add --torch");
    if (o->torch_steps && !torch)
        return cli_usage_error("run", "--torch-steps chooses the steps whose operators are "
                               "recorded: add --torch");
    if (o->torch_steps && read_steps(o) < 0)
        return cli_usage_error("run", "--torch-steps takes [WAIT:]ACTIVE[:REPEAT], whole numbers "
                               "with ACTIVE 1 or more (as torch.profiler.schedule's wait, "
                               "active and repeat), not '%s'", o->torch_steps);
    int tensorboard = strcmp(fmt->name, "tensorboard") == 0;
    if (o->subprocesses && fmt->needs_timeline)
        return cli_usage_error("run", "-f %s is one process's timeline: with --subprocesses "
                               "write -f json or pstats (the processes summed, each under "
                               "its frame)", o->format);
    if (tensorboard && !torch)
        return cli_usage_error("run", "-f tensorboard writes PyTorch's trace: add --torch");
    if (tensorboard && !o->out)
        return cli_usage_error("run", "-f tensorboard needs -o DIR (the folder TensorBoard's "
                               "--logdir reads)");
    if (fmt->needs_timeline && !torch)
        return cli_usage_error("run", "'%s' is a timeline: sonde run writes one of calls and "
                               "operators with --torch; for samples, sonde record -f %s",
                               o->format, o->format);
    if (o->max_events && !fmt->needs_timeline)
        return cli_usage_error("run", "--max-events bounds a timeline: use it with --torch "
                               "-f chrome or -f tensorboard");
    if (fmt->needs_timeline && !o->out)
        return cli_usage_error("run", "-f %s needs -o FILE (the trace is a file for Perfetto "
                               "or chrome://tracing)", o->format);
    if (fmt->needs_timeline && !o->max_events)
        o->max_events = SONDE_DEFAULT_SLICES;
    if (tensorboard && strcmp(o->out, "-") != 0 && (rc = trace_file_in(o)) != 0)
        return rc;
    return cli_output_open(out, o->out);
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
        .memory_stall = r->memory_stall,
        .swap_ins = r->swap_ins,
        .max_rss_kb = u->ru_maxrss,
        .major_faults = u->ru_majflt,
        .minor_faults = u->ru_minflt,
        .voluntary_switches = u->ru_nvcsw,
        .involuntary_switches = u->ru_nivcsw,
    };
    return s;
}

/* The verdict line sonde_verdict_write appended to b from `from` on
 * into a->verdict (without its label).  0, or -1 on out of memory. */
static int keep_verdict(const sonde_buf *b, size_t from, sonde_about *a)
{
    static const char label[] = "verdict:   ";
    const char *text = b->data ? b->data + from : NULL;
    const char *v = text ? strstr(text, label) : NULL;
    if (!v)
        return 0;
    v += sizeof label - 1;
    return sonde_about_set(&a->verdict, v, strcspn(v, "\n"));
}

/* -o in a format with room for what was profiled: the JSON the launcher
 * left, with a's fields, or converted to the format.  0, or
 * SONDE_EXIT_FAILED after printing why. */
static int deliver_about(const sonde_format *fmt, const cli_output *out,
                         const launcher_session *run, sonde_about *a)
{
    if (strcmp(fmt->name, "json") == 0)
        return launcher_deliver_about(run, "out", a, out);
    char path[PATH_MAX], err[512];
    sonde_profile p;
    sonde_stats s;
    int rc = launcher_prepare_load(run, "out", path, sizeof path, &p, &s);
    if (rc != 0)
        return rc;
    if (sonde_load_file(path, &p, &s, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else {
        sonde_about_clear(&p.about);
        p.about = *a; /* lent for the writing */
        sonde_format_job job = { .format = fmt, .profile = &p, .stats = &s };
        rc = cli_output_fill(out, sonde_format_fill, &job);
        sonde_about_init(&p.about);
    }
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    return rc;
}

/* -f tensorboard -o DIR with --torch-steps: the files of the cycles after
 * the first (the launcher's out.1, out.2, ...), each in DIR under its own
 * name.  0, or SONDE_EXIT_FAILED after printing why. */
static int deliver_cycles(const run_opts *o, const launcher_session *run)
{
    for (int k = 1;; k++) {
        char name[32], path[PATH_MAX], file[PATH_MAX];
        cli_output dest;
        snprintf(name, sizeof name, "out.%d", k);
        if (launcher_path(run, name, path, sizeof path) < 0 || access(path, F_OK) < 0)
            return 0;
        if (trace_file_of_cycle(o, k, file, sizeof file) < 0)
            return cli_fail(SONDE_EXIT_FAILED, "the folder name '%s' is too long", o->out);
        if (cli_output_open(&dest, file) != 0 || launcher_deliver(run, name, &dest) != 0)
            return SONDE_EXIT_FAILED;
        sonde_buf b;
        sonde_buf_init(&b);
        sonde_buf_printf(&b, "profile:   %s (%s, --torch-steps cycle %d)\n", file, o->format,
                         k + 1);
        cli_report(&b);
        sonde_buf_free(&b);
    }
}

/* Prints the table and the verdict from the stats the launcher wrote,
 * then writes the profile to -o (with what was profiled, where its format
 * has room).  0, or SONDE_EXIT_FAILED after printing why the table or -o
 * could not be made. */
static int report(const run_opts *o, const cli_output *out, const launcher_program *prog,
                  const launcher_session *run)
{
    char stats_path[PATH_MAX];
    sonde_profile p;
    sonde_stats s;
    if (launcher_prepare_load(run, "stats", stats_path, sizeof stats_path, &p, &s) != 0)
        return SONDE_EXIT_FAILED;
    sonde_about about;
    sonde_about_init(&about);
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
        size_t from = b.len;
        sonde_usage u = usage_of(&run->result);
        sonde_verdict_write(&b, &u, &p, &s);
        cli_report(&b);
        if (sonde_buf_ok(&b) && keep_verdict(&b, from, &about) < 0)
            rc = cli_fail(-1, "out of memory");
    }
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    const sonde_format *fmt = sonde_format_find(o->format);
    char trace[PATH_MAX];
    if (out->name && o->torch_steps && fmt->needs_timeline &&
        (launcher_path(run, "out", trace, sizeof trace) < 0 || access(trace, F_OK) < 0)) {
        /* --torch-steps' window never came: the launcher said so, and
         * left no trace (it would hold nothing) */
        sonde_about_clear(&about);
        return SONDE_EXIT_FAILED;
    }
    if (out->name) {
        int delivered = !fmt->keeps_about ? launcher_deliver(run, "out", out)
                        : launcher_about(run, prog, &about) < 0
                            ? cli_fail(SONDE_EXIT_FAILED, "out of memory")
                            : deliver_about(fmt, out, run, &about);
        sonde_about_clear(&about);
        if (delivered != 0)
            return SONDE_EXIT_FAILED;
        sonde_buf_init(&b);
        sonde_buf_printf(&b, "profile:   %s (%s)\n", o->out, o->format);
        cli_report(&b);
        sonde_buf_free(&b);
        if (o->cycles_apart && deliver_cycles(o, run) != 0)
            return SONDE_EXIT_FAILED;
    }
    sonde_about_clear(&about);
    return rc < 0 ? SONDE_EXIT_FAILED : 0;
}

/* --subprocesses: report()'s table, verdict and -o, of the sum of the
 * program's profile and every followed child's (run_children.h), each
 * under its process's frame.  0, or SONDE_EXIT_FAILED after printing why. */
static int report_family(const run_opts *o, const cli_output *out, const launcher_program *prog,
                         const launcher_session *run)
{
    sonde_profile p;
    sonde_stats s;
    sonde_about about;
    sonde_about_init(&about);
    int children = 0, rc;
    if (launcher_about(run, prog, &about) < 0) {
        sonde_profile_init(&p);
        sonde_stats_init(&s);
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    } else {
        rc = run_children_load(run, &about, &p, &s, &children);
    }
    char err[512];
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_table_opts topts = { .sort = o->sort, .limit = o->limit };
    if (rc == 0 && sonde_table_write(&b, &p, &s, &topts, err, sizeof err) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    if (rc == 0) {
        sonde_buf_printf(&b, "\nprocesses: %d, the program and %d child%s it started, each "
                         "under \"process PID (command)\"\n", children + 1, children,
                         children == 1 ? "" : "ren");
        size_t from = b.len;
        sonde_usage u = usage_of(&run->result);
        u.children_profiled = 1;
        sonde_verdict_write(&b, &u, &p, &s);
        cli_report(&b);
        if (sonde_buf_ok(&b) && keep_verdict(&b, from, &about) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    sonde_buf_free(&b);
    if (rc == 0 && out->name) {
        sonde_about summed = p.about;
        about.processes = (uint32_t)children + 1;
        p.about = about; /* lent for the writing */
        sonde_format_job job = { .format = sonde_format_find(o->format), .profile = &p,
                                 .stats = &s };
        rc = cli_output_fill(out, sonde_format_fill, &job);
        p.about = summed;
        sonde_buf_init(&b);
        sonde_buf_printf(&b, "profile:   %s (%s)\n", o->out, o->format);
        if (rc == 0)
            cli_report(&b);
        sonde_buf_free(&b);
    }
    sonde_about_clear(&about);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    return rc;
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    run_opts o = { .format = "pstats", .sort = "cumtime", .limit = 30 };
    cli_output out;
    int rc = parse(argc, argv, &o, &out);
    if (rc != 0)
        return cli_exit(rc);
    char options[400] = "{}", steps[96] = "null";
    if (o.torch_steps)
        snprintf(steps, sizeof steps, "[%ld, %ld, %ld]", o.steps[0], o.steps[1], o.steps[2]);
    if (o.subprocesses)
        snprintf(options, sizeof options, "{\"children\": true}");
    if ((o.torch || o.torch_shapes) &&
        snprintf(options, sizeof options, "{\"torch\": true, \"shapes\": %s, \"memory\": %s, "
                 "\"max_events\": %ld, \"steps\": %s, \"steps_given\": \"%s\", "
                 "\"all_calls\": %s, \"cycles_apart\": %s, \"children\": %s}",
                 o.torch_shapes ? "true" : "false", o.torch_memory ? "true" : "false",
                 o.max_events, steps, o.torch_steps ? o.torch_steps : "",
                 o.torch_all_calls ? "true" : "false", o.cycles_apart ? "true" : "false",
                 o.subprocesses ? "true" : "false") >=
            (int)sizeof options)
        return cli_exit(cli_usage_error("run", "--torch-steps '%s' is too long",
                                        o.torch_steps ? o.torch_steps : ""));
    /* a format with room for what was profiled is written here from the
     * launcher's JSON, once the run's figures are known */
    const sonde_format *fmt = sonde_format_find(o.format);
    launcher_program prog = {
        .python = launch_python(env, o.prog.python), .tool = "run",
        .format = o.subprocesses ? "json" : !out.name ? "" : fmt->keeps_about ? "json"
                                                                                : o.format,
        .options = options, .mode = o.prog.mode,
        .target = o.prog.target, .args = o.prog.args, .nargs = o.prog.nargs,
        .children = o.subprocesses,
    };
    launcher_session run;
    /* --subprocesses: each process leaves its JSON part alone, no stats */
    if (launcher_run(env, &prog, o.subprocesses ? "out" : "stats", &run) == LAUNCHER_PROFILE)
        rc = o.subprocesses ? report_family(&o, &out, &prog, &run)
                            : report(&o, &out, &prog, &run);
    launcher_close(&run);
    int code = launcher_exit_code(&run);
    return code == 0 ? rc : code;
}
