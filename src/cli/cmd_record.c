/* cmd_record.c - sonde record: sample a Python process from outside.
 *
 * With -p it reads a running process's stacks without stopping or
 * changing it; with -- CMD it starts the command and samples it until it
 * exits, passing its exit code on.  The profile goes through the same
 * writers as sonde run's; a summary of what was sampled and what was
 * missed goes to stderr. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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
    "running one without stopping or changing it; -- CMD starts CMD and samples\n"
    "it until it exits.  Ctrl-C stops and writes what was gathered.\n"
    "\n"
    "  -o, --output FILE    where to write (default sonde-PID.EXT)\n"
    "  -f, --format FMT     flamegraph (default, an interactive SVG), speedscope,\n"
    "                       chrome (a timeline for chrome://tracing, Perfetto),\n"
    "                       collapsed or json\n"
    "  -r, --rate HZ        samples per second (default 100)\n"
    "  -d, --duration SECS  stop after this long (default: until the process ends)\n"
    "      --idle           keep threads that are sleeping or blocked too\n"
    "      --gil            keep only the thread holding the GIL\n"
    "      --threads        put each thread at the root of its stacks\n"
    "      --subprocesses   sample the Python processes it starts too (multiprocessing\n"
    "                       workers, subprocesses), each under \"process PID (command)\"\n";

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
            cli_flag(a, NULL, "--threads") || cli_flag(a, NULL, "--subprocesses")) {
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
                               "chrome, collapsed or json)", o->format);
    return 0;
}

/* Starts the command; its pid, or -1 after printing why not. */
static long start_command(char **cmd)
{
    pid_t pid = launch_start(cmd);
    return pid < 0 ? cli_fail(-1, "cannot start %s: %s", cmd[0], strerror(errno)) : pid;
}

/* Attaches to a process just started: its interpreter appears once the
 * dynamic loader has mapped it and Python has initialised (a wrapper
 * script may exec it first).  Gives up after ATTACH_SECONDS, or when the
 * command ends first (-ESRCH). */
#define ATTACH_SECONDS 10
static int attach_started(sonde_walker *w, long pid, sonde_profile *p, char *err, size_t errlen)
{
    struct timespec pause = { 0, 2000000 };
    for (int tries = 0;; tries++) {
        int rc = sonde_walker_open(w, (int)pid, p, err, errlen);
        if (rc == 0)
            return 0;
        sonde_walker_close(w);
        siginfo_t info = { 0 };
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid)
            return -ESRCH;
        if (stop_requested || tries * 2 >= ATTACH_SECONDS * 1000)
            return rc;
        nanosleep(&pause, NULL);
    }
}

static int write_profile(const record_opts *o, long pid, sonde_profile *p, char *path,
                         size_t pathlen)
{
    static const struct { const char *format, *ext; } exts[] = {
        { "flamegraph", "svg" }, { "speedscope", "speedscope.json" }, { "chrome", "trace.json" },
        { "collapsed", "txt" }, { "json", "json" },
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
    sonde_walker w;
    char err[512], path[4096];
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    rc = started ? attach_started(&w, pid, &p, err, sizeof err)
                 : sonde_walker_open(&w, (int)pid, &p, err, sizeof err);
    sonde_sampler_counts counts = { 0 };
    if (rc < 0) {
        if (started && rc == -ESRCH)
            cli_fail(0, "%s ended before its Python interpreter could be read: nothing "
                     "recorded", o.cmd[0]);
        else if (started)
            cli_fail(0, "%s (still waiting for the command to end)", err);
        else
            cli_fail(0, "%s", err);
        rc = SONDE_EXIT_FAILED;
    } else if (sonde_sampler_run(&w, &p, &o.s, &stop_requested, &counts) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory while sampling");
    } else if (write_profile(&o, pid, &p, path, sizeof path) < 0) {
        rc = SONDE_EXIT_FAILED;
    } else {
        fprintf(stderr, "sonde: %llu samples in %.2f s (%.0f Hz asked, %.0f Hz kept), "
                "%llu missed, %llu thread stacks of %u process%s, %llu torn reads skipped%s; "
                "wrote %s (%s)\n",
                (unsigned long long)counts.ticks, counts.seconds, o.s.rate,
                counts.seconds > 0 ? (double)counts.ticks / counts.seconds : 0,
                (unsigned long long)counts.missed, (unsigned long long)counts.stacks,
                counts.processes, counts.processes == 1 ? "" : "es",
                (unsigned long long)counts.torn, counts.ended ? "; the process ended" : "",
                path, o.format);
        rc = 0;
    }
    sonde_walker_close(&w);
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
