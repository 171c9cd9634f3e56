/* cmd_record.c - sonde record: sample a Python process from outside.
 *
 * With -p it reads a running process's stacks without stopping or
 * changing it; with -- CMD it starts the command and samples it until it
 * exits, passing its exit code on.  A command that is not Python (a
 * shell, make, tox, env, a wrapper script) is followed to the Python
 * processes it starts (family.h).  The profile goes through the same
 * writers as sonde run's; a summary of what was sampled, kept and missed
 * goes to stderr. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/stats.h"
#include "../formats/format.h"
#include "../sampler/sampler.h"
#include "commands.h"
#include "launch.h"
#include "options.h"

static const char usage[] =
    "usage: sonde record [-o FILE] [-f FORMAT] [-r HZ] [-d SECONDS] [--idle] [--gil]\n"
    "                    [--threads] [--subprocesses] (-p PID | -- CMD [ARGS...])\n"
    "\n"
    "Samples the Python stacks of a process from outside: -p attaches to a\n"
    "running one; -- CMD starts CMD and samples it until it exits, then exits\n"
    "with its exit code.  When CMD (or PID) is not Python itself -- a shell,\n"
    "make, tox, env, a script that runs python -- the Python processes it\n"
    "starts are sampled (the outermost ones; --subprocesses adds theirs).\n"
    "The target is never stopped: sonde only reads its memory, so py-spy's\n"
    "--nonblocking is accepted and changes nothing.  Ctrl-C stops and writes\n"
    "what was gathered.  Stacks deeper than 1024 frames keep their innermost\n"
    "1024 under a \"[truncated]\" frame.\n"
    "\n"
    "  -o, --output FILE    where to write (default sonde-PID.EXT)\n"
    "  -f, --format FMT     flamegraph (default, an interactive SVG), speedscope,\n"
    "                       chrome (a timeline for chrome://tracing, Perfetto),\n"
    "                       collapsed, json or pprof (go tool pprof, Pyroscope, Parca)\n"
    "  -r, --rate HZ        samples per second (default 100)\n"
    "  -d, --duration SECS  stop after this long (default: until the process ends)\n"
    "      --idle           keep threads that are sleeping or blocked too\n"
    "      --gil            keep only the thread holding the GIL\n"
    "      --threads        put each thread at the root of its stacks\n"
    "      --subprocesses   sample every Python process it starts too (multiprocessing\n"
    "                       workers, subprocesses), each under \"process PID (command)\"\n"
    "      --nonblocking    accepted for py-spy's sake: sonde never stops the target\n";

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct record_opts {
    const char *out, *format;
    sonde_sampler_opts s;
    long pid;
    char **cmd;
} record_opts;

static int parse(int argc, char **argv, record_opts *o)
{
    const char *rate = NULL, *duration = NULL, *pid = NULL;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (cli_flag(a, "-h", "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (strcmp(a, "--") == 0) {
            o->cmd = argv + i + 1;
            break;
        }
        if (cli_flag(a, NULL, "--idle") || cli_flag(a, NULL, "--gil") ||
            cli_flag(a, NULL, "--threads") || cli_flag(a, NULL, "--subprocesses") ||
            cli_flag(a, NULL, "--nonblocking")) {
            o->s.idle |= strcmp(a, "--idle") == 0;
            o->s.gil_only |= strcmp(a, "--gil") == 0;
            o->s.thread_roots |= strcmp(a, "--threads") == 0;
            o->s.subprocesses |= strcmp(a, "--subprocesses") == 0;
            continue;
        }
        if ((r = cli_option(argc, argv, &i, "-o", "--output", &o->out)) ||
            (r = cli_option(argc, argv, &i, "-f", "--format", &o->format)) ||
            (r = cli_option(argc, argv, &i, "-r", "--rate", &rate)) ||
            (r = cli_option(argc, argv, &i, "-d", "--duration", &duration)) ||
            (r = cli_option(argc, argv, &i, "-p", "--pid", &pid))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        return cli_usage_error("record", "unknown argument '%s' (a command to start goes "
                               "after --)", a);
    }
    if (!pid == !(o->cmd && o->cmd[0]))
        return cli_usage_error("record", "give either -p PID or -- CMD [ARGS...]");
    if (pid && cli_pid("record", pid, &o->pid) < 0)
        return SONDE_EXIT_USAGE;
    char *end;
    if (rate && (o->s.rate = strtod(rate, &end), *end || !(o->s.rate >= 1 && o->s.rate <= 100000)))
        return cli_usage_error("record", "-r needs a rate from 1 to 100000 samples per second, "
                               "not '%s'", rate);
    if (duration && (o->s.duration = strtod(duration, &end),
                     *end || !(o->s.duration > 0 && o->s.duration < 1e7)))
        return cli_usage_error("record", "-d needs a number of seconds, not '%s'", duration);
    const sonde_format *fmt = sonde_format_find(o->format);
    if (!fmt || strcmp(o->format, "pstats") == 0)
        return cli_usage_error("record", "unknown format '%s' (use flamegraph, speedscope, "
                               "chrome, collapsed, json or pprof)", o->format);
    return 0;
}

/* Starts the command; its pid, or -1 after printing why not. */
static long start_command(char **cmd)
{
    pid_t pid = launch_start(cmd);
    return pid < 0 ? cli_fail(-1, "cannot start %s: %s", cmd[0], strerror(errno)) : pid;
}

static int write_profile(const record_opts *o, long pid, sonde_profile *p, char *path,
                         size_t pathlen)
{
    static const struct { const char *format, *ext; } exts[] = {
        { "flamegraph", "svg" }, { "speedscope", "speedscope.json" }, { "chrome", "trace.json" },
        { "collapsed", "txt" }, { "json", "json" }, { "pprof", "pb.gz" },
    };
    const char *ext = "out";
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (strcmp(exts[i].format, o->format) == 0)
            ext = exts[i].ext;
    if (o->out)
        snprintf(path, pathlen, "%s", o->out);
    else
        snprintf(path, pathlen, "sonde-%ld.%s", pid, ext);
    sonde_stats s;
    sonde_stats_init(&s);
    char err[512];
    int rc = sonde_stats_from_profile(&s, p) < 0 ? cli_fail(-1, "out of memory")
             : sonde_format_write_file(sonde_format_find(o->format), path, p, &s, NULL, err,
                                       sizeof err) < 0 ? cli_fail(-1, "%s", err)
                                                       : 0;
    sonde_stats_free(&s);
    return rc;
}

/* The summary on stderr: what was sampled, what was kept and why the rest
 * was not, and where it went. */
static void print_summary(const record_opts *o, const sonde_sampler_counts *c, const char *path)
{
    fprintf(stderr, "sonde: %llu samples in %.2f s (%.0f Hz asked, %.0f Hz kept), %llu missed, "
            "of %u process%s%s\n",
            (unsigned long long)c->ticks, c->seconds, o->s.rate,
            c->seconds > 0 ? (double)c->ticks / c->seconds : 0, (unsigned long long)c->missed,
            c->processes, c->processes == 1 ? "" : "es", c->ended ? "; the process ended" : "");
    fprintf(stderr, "sonde: %llu thread stacks read, %llu kept", (unsigned long long)c->read,
            (unsigned long long)c->kept);
    if (c->idle)
        fprintf(stderr, ", %llu idle ones dropped (--idle keeps them)",
                (unsigned long long)c->idle);
    if (c->not_gil)
        fprintf(stderr, ", %llu not holding the GIL dropped (--gil)",
                (unsigned long long)c->not_gil);
    fprintf(stderr, ", %llu torn reads skipped\n", (unsigned long long)c->torn);
    if (c->truncated)
        fprintf(stderr, "sonde: %llu stacks were deeper than %d frames: their innermost %d "
                "frames are kept, under \"%s\"\n",
                (unsigned long long)c->truncated, SONDE_WALK_MAX_DEPTH, SONDE_WALK_MAX_DEPTH,
                SONDE_SAMPLER_TRUNCATED);
    if (c->kept == 0)
        fprintf(stderr, "sonde: no stack was kept: %s\n",
                c->idle ? "every thread read was idle (--idle keeps idle threads)"
                        : "no Python code was seen running");
    fprintf(stderr, "sonde: wrote %s (%s)\n", path, o->format);
}

/* Why nothing could be recorded, in one line. */
static void print_nothing(const record_opts *o, const sonde_family *f, long pid)
{
    if (f->last_message[0])
        cli_fail(0, "%s: nothing recorded", f->last_message);
    else if (o->cmd)
        cli_fail(0, "%s ran no Python process that sonde could read: nothing recorded",
                 o->cmd[0]);
    else
        cli_fail(0, "process %ld ended before its Python interpreter could be read: nothing "
                 "recorded", pid);
}

int cmd_record(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    record_opts o = { .format = "flamegraph", .s = { .rate = 100 } };
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;

    struct sigaction stop = { .sa_handler = on_stop }, old_int, old_term;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, &old_int);
    sigaction(SIGTERM, &stop, &old_term);

    long pid = o.pid;
    int started = o.cmd != NULL;
    if (started && (pid = start_command(o.cmd)) < 0)
        return SONDE_EXIT_FAILED;

    sonde_profile p;
    sonde_family *family = malloc(sizeof *family);
    char path[4096];
    if (!family || sonde_profile_init(&p) < 0) {
        free(family);
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    sonde_family_init(family, (int)pid, o.s.subprocesses, &p);
    sonde_sampler_counts counts = { 0 };
    char err[512];
    if (!started && sonde_family_attach(family, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else if (sonde_sampler_run(family, &p, &o.s, &stop_requested, &counts) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory while sampling");
    } else if (counts.processes == 0) {
        print_nothing(&o, family, pid);
        rc = SONDE_EXIT_FAILED;
    } else if (write_profile(&o, pid, &p, path, sizeof path) < 0) {
        rc = SONDE_EXIT_FAILED;
    } else {
        print_summary(&o, &counts, path);
        rc = 0;
    }
    sonde_family_free(family);
    free(family);
    sonde_profile_free(&p);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (started) {
        /* The command decides its own end (Ctrl-C reached it too), and its
         * exit code is the answer, unless sonde could not profile it. */
        int status;
        while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR)
            ;
        return rc == SONDE_EXIT_FAILED ? rc : launch_exit_code(status);
    }
    return rc;
}
