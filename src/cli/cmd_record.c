/* cmd_record.c - sonde record: sample a Python process from outside.
 *
 * With -p it reads a running process's stacks without stopping or changing
 * it (--native stops the threads that run Python for a moment each sample:
 * native/session.h); with -- CMD it starts the command and samples it
 * until it exits, passing its exit code on.  A command that is not Python
 * (a shell, make, tox, env, a wrapper script) is followed to the Python
 * processes it starts (family.h).  The profile goes through the same
 * writers as sonde run's, saying what was sampled (core/about.h: the
 * command line, the interpreter, when, the span sampled, the CPU the
 * target used meanwhile, the processes); a summary of what was sampled,
 * kept and missed goes to stderr. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/stats.h"
#include "../formats/format.h"
#include "../sampler/proc/task.h"
#include "../sampler/sampler.h"
#include "commands.h"
#include "launch.h"
#include "options.h"
#include "output.h"
#include "record_every.h"
#include "sample_opts.h"

typedef struct record_opts {
    const char *out, *format;
    sonde_sampler_opts s;
    long pid;
    char **cmd;
    int native;                  /* --native (or --native-all) */
    cli_sample_opts sample;      /* --mode, --idle, --gil, --thread */
    long keep;                   /* --keep N (with --every) */
    unsigned long long keep_bytes;   /* --keep-bytes SIZE (with --every) */
    const char *async_mode;      /* --async-mode running|all */
} record_opts;

/* -d's reader: seconds, more than 0 and less than 1e7, into the double
 * at dest. */
static int take_duration(const char *cmd, void *dest, const char *value)
{
    char *end;
    double v = strtod(value, &end);
    if (*end || !(v > 0 && v < 1e7))
        return cli_usage_error(cmd, "-d needs a number of seconds, not '%s'", value);
    *(double *)dest = v;
    return 0;
}

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "FILE", .type = CLI_STRING,
      .offset = offsetof(record_opts, out), .help = "where to write (default sonde-PID.EXT)" },
    { .short_name = 'f', .long_name = "format", .arg = "FMT", .type = CLI_STRING,
      .offset = offsetof(record_opts, format),
      .help = "flamegraph (default, an interactive SVG), speedscope,\n"
              "chrome (a timeline for chrome://tracing, Perfetto),\n"
              "collapsed, json or pprof (go tool pprof, Pyroscope, Parca)" },
    { .short_name = 'r', .long_name = "rate", .arg = "HZ", .type = CLI_REAL,
      .offset = offsetof(record_opts, s.rate), .min = 1, .max = 100000,
      .what = "needs a rate from 1 to 100000 samples per second",
      .help = "samples per second (default 100)" },
    { .short_name = 'd', .long_name = "duration", .arg = "SECS", .type = CLI_CALL,
      .offset = offsetof(record_opts, s.duration), .call = take_duration,
      .help = "stop after this long (default: until the process ends)" },
    { .short_name = 'p', .long_name = "pid", .arg = "PID", .type = CLI_PID,
      .offset = offsetof(record_opts, pid), .help = "the running process to sample" },
    { .long_name = "every", .arg = "SECS", .type = CLI_REAL,
      .offset = offsetof(record_opts, s.every), .min = 1, .max = 1e7,
      .what = "needs a number of seconds from 1 to 10000000",
      .help = "a file per interval of this many seconds, into the\n"
              "folder -o names (default sonde-PID), each named by its\n"
              "start time (default format pprof)" },
    { .long_name = "keep", .arg = "N", .type = CLI_COUNT, .offset = offsetof(record_opts, keep),
      .min = 1, .max = 1e9, .what = "needs a number of files from 1 to 1000000000",
      .help = "with --every: keep only the newest N files written" },
    { .long_name = "keep-bytes", .arg = "SIZE", .type = CLI_CALL,
      .offset = offsetof(record_opts, keep_bytes), .call = cli_take_size,
      .help = "with --every: keep only the newest files written that\n"
              "fit in SIZE bytes (K, M, G: KiB, MiB, GiB; the newest\n"
              "file always stays)" },
    CLI_SAMPLE_OPTIONS(record_opts, sample),
    { .long_name = "threads", .type = CLI_FLAG, .offset = offsetof(record_opts, s.thread_roots),
      .set = 1, .help = "put each thread at the root of its stacks" },
    { .long_name = "async", .type = CLI_FLAG, .offset = offsetof(record_opts, s.async), .set = 1,
      .help = "a thread running an asyncio task: its stack goes on through\n"
              "the tasks awaiting it, each under \"<task NAME>\", in place of\n"
              "the event loop's frames" },
    { .long_name = "async-mode", .arg = "MODE", .type = CLI_STRING,
      .offset = offsetof(record_opts, async_mode),
      .help = "--async's tasks: running (the default: those a thread\n"
              "runs) or all (with --mode wall: every suspended task too,\n"
              "each tick, as its own stack on its loop's thread)" },
    { .long_name = "subprocesses", .type = CLI_FLAG,
      .offset = offsetof(record_opts, s.subprocesses), .set = 1,
      .help = "sample every Python process it starts too (multiprocessing\n"
              "workers, subprocesses), each under \"process PID (command)\"" },
    CLI_NATIVE_OPTIONS(record_opts, native, s.native_all,
                       "native frames too: the C/C++ functions of extensions and\n"
                       "libraries, under the Python lines that called them, on every\n"
                       "thread (a thread running Python is stopped for some\n"
                       "microseconds per sample; others are read by perf where\n"
                       "the kernel allows it)"),
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_record = {
    .name = "record",
    .summary = "sample a running Python process from outside (replaces py-spy record)",
    .synopsis = "[-o FILE] [-f FORMAT] [-r HZ] [-d SECONDS]\n"
                "[--every SECONDS [--keep N] [--keep-bytes SIZE]]\n"
                "[--mode cpu|wall|gil|exception] [--thread THREAD]...\n"
                "[--threads] [--async [--async-mode running|all]] [--subprocesses]\n"
                "[--native | --native-all]\n"
                "(-p PID | -- CMD [ARGS...])",
    .about = "Samples the Python stacks of a process from outside: -p attaches to a\n"
             "running one; -- CMD starts CMD and samples it until it exits, then exits\n"
             "with its exit code.  When CMD (or PID) is not Python itself -- a shell,\n"
             "make, tox, env, a script that runs python -- the Python processes it\n"
             "starts are sampled (the outermost ones; --subprocesses adds theirs).\n"
             "Without --native the target is never stopped: sonde only reads its\n"
             "memory, so py-spy's --nonblocking is accepted and changes nothing.\n"
             "Ctrl-C stops and writes what was gathered; so does a SIGTERM or SIGHUP\n"
             "sent to sonde (timeout, kill, systemd), which is then passed on to CMD.\n"
             "--mode cpu (the default) weighs each sample by the CPU time its thread\n"
             "used since its previous sample, as the kernel counts it, so times are\n"
             "CPU time and shares hold on a busy machine; --mode wall samples every\n"
             "thread, running or not (py-spy's --idle).  Stacks deeper than 1024\n"
             "frames keep their innermost 1024 under a \"[truncated]\" frame.\n"
             "--native adds the C and C++ frames of every thread (threads that never\n"
             "ran Python too): a thread running Python is stopped alone for the\n"
             "microseconds its stack takes to copy (ptrace); the others are read by\n"
             "perf without a stop where the kernel allows it.  --every writes a\n"
             "profile per interval into a folder, for a service profiled for hours:\n"
             "sonde merge sums any window of them.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

static volatile sig_atomic_t stop_requested; /* set by the stop signals' handler, read by
                                                the sampling loop: one thread */
static volatile sig_atomic_t command_pid;    /* the command started, once it runs; else 0 */
static volatile sig_atomic_t unpassed_stop;  /* a stop signal to pass on that came before it */

/* Stops the sampling.  A SIGTERM or SIGHUP another process sent to sonde
 * alone (timeout, kill, systemd) is passed on to the command, which ends
 * as it would unprofiled while sonde writes the profile; the terminal's
 * Ctrl-C, and signals the command sent, reached it already. */
static void on_stop(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved = errno;
    stop_requested = 1;
    if (sig != SIGINT && info->si_code <= 0 && info->si_pid != (pid_t)command_pid) {
        if (command_pid > 0)
            kill((pid_t)command_pid, sig);
        else
            unpassed_stop = sig;
    }
    errno = saved;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (int)(sizeof stop_signals / sizeof stop_signals[0])

/* Puts back the stop signals' handlers sonde had before it sampled: after
 * the command has ended, for the stop signals sonde is sent while it waits
 * for the command's end are passed on as well. */
static void restore_stop_signals(const struct sigaction old[NSTOP])
{
    for (int i = 0; i < NSTOP; i++)
        if (old[i].sa_handler != SIG_IGN)
            sigaction(stop_signals[i], &old[i], NULL);
}

/* The command line into *o, checked.  0, or an exit code. */
static int parse(int argc, char **argv, record_opts *o)
{
    cli_words words;
    int rc = cli_parse(&cmd_record, argc, argv, o, &words);
    if (rc != 0)
        return rc;
    if (words.before_dashes > 0)
        return cli_usage_error("record", "unknown argument '%s' (a command to start goes "
                               "after --)", words.word[0]);
    o->cmd = words.count > 0 ? words.word : NULL;
    o->native |= o->s.native_all;
    if ((rc = cli_sample_mode("record", &o->sample, &o->s.mode)) != 0)
        return rc;
    o->s.threads = o->sample.threads.n ? &o->sample.threads : NULL;
    if (!o->pid == !o->cmd)
        return cli_usage_error("record", "give either -p PID or -- CMD [ARGS...]");
    if (o->async_mode && strcmp(o->async_mode, "running") != 0 &&
        strcmp(o->async_mode, "all") != 0)
        return cli_usage_error("record", "--async-mode takes running or all, not '%s'",
                               o->async_mode);
    o->s.async |= o->async_mode != NULL;
    o->s.async_all = o->async_mode && strcmp(o->async_mode, "all") == 0;
    if (o->s.async_all && o->s.mode != SONDE_MODE_WALL)
        return cli_usage_error("record", "--async-mode all counts the tasks that wait: it "
                               "goes with --mode wall (or --idle)");
    if ((o->keep || o->keep_bytes) && !o->s.every)
        return cli_usage_error("record", "--keep and --keep-bytes bound --every's files: give "
                               "--every SECONDS too");
    if (!o->format)
        o->format = o->s.every ? "pprof" : "flamegraph";
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

/* The extension of a file in the format. */
static const char *format_ext(const char *format)
{
    static const struct { const char *format, *ext; } exts[] = {
        { "flamegraph", "svg" }, { "speedscope", "speedscope.json" }, { "chrome", "trace.json" },
        { "collapsed", "txt" }, { "json", "json" }, { "pprof", "pb.gz" },
    };
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (strcmp(exts[i].format, format) == 0)
            return exts[i].ext;
    return "out";
}

/* Where the profile goes, checked: -o, else sonde-PID.EXT in the current
 * folder (its name kept in name); with --every, the folder -o names, else
 * sonde-PID, into *every.  0, or an exit code after printing why it
 * cannot be written. */
static int open_output(const record_opts *o, long pid, char *name, size_t len, cli_output *out,
                       cli_every *every)
{
    if (!o->s.every) {
        snprintf(name, len, "sonde-%ld.%s", pid, format_ext(o->format));
        return cli_output_open(out, o->out ? o->out : name);
    }
    snprintf(name, len, "sonde-%ld", pid);
    *every = (cli_every){ .dir = o->out ? o->out : name, .ext = format_ext(o->format),
                          .pid = pid, .keep = o->keep, .keep_bytes = o->keep_bytes };
    return cli_every_check_dir(every);
}

/* CPU seconds (user + system) of pid, its reaped children's included,
 * from /proc/PID/stat; -1 when it cannot be read. */
static double cpu_of(long pid)
{
    char buf[1024];
    const char *f = sonde_proc_task_fields((int)pid, 0, buf, sizeof buf);
    long long utime, stime, cutime, cstime;
    long hz = sysconf(_SC_CLK_TCK);
    /* state ppid ... utime stime cutime cstime: fields 14 to 17 of the line */
    if (!f || hz <= 0 ||
        sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld", &utime,
               &stime, &cutime, &cstime) != 4)
        return -1;
    return (double)(utime + stime + cutime + cstime) / (double)hz;
}

/* The command line of a running pid (/proc/PID/cmdline) into a's argv. */
static void take_cmdline(long pid, sonde_about *a)
{
    char path[64], cmd[65536];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(cmd, 1, sizeof cmd, f) : 0;
    if (f)
        fclose(f);
    for (size_t at = 0; at < n;) {
        size_t len = strnlen(cmd + at, n - at);
        if (sonde_about_add_arg(a, cmd + at, len) < 0)
            return; /* out of memory: the header goes without it */
        at += len + 1;
    }
}

/* The working directory of a running pid into a's cwd, as the process
 * names its own paths: /proc/PID/cwd less /proc/PID/root when that is not
 * "/" (a chroot; a container's cwd reads as the container sees it). */
static void take_cwd(long pid, sonde_about *a)
{
    char path[64], cwd[PATH_MAX], root[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%ld/cwd", pid);
    ssize_t n = readlink(path, cwd, sizeof cwd - 1);
    if (n <= 0 || cwd[0] != '/')
        return;
    cwd[n] = '\0';
    snprintf(path, sizeof path, "/proc/%ld/root", pid);
    ssize_t r = readlink(path, root, sizeof root - 1);
    const char *own = cwd;
    if (r > 1 && root[0] == '/' && r <= n && memcmp(cwd, root, (size_t)r) == 0 &&
        (cwd[r] == '/' || cwd[r] == '\0'))
        own = cwd[r] ? cwd + r : "/";
    sonde_about_set(&a->cwd, own, strlen(own)); /* out of memory: unknown */
}

/* What was profiled, before sampling starts: the command line (as given
 * after --, or the process's), its working directory (the one sonde gives
 * a command, or the process's), when, and the CPU it had used (-p). */
static void about_begin(const record_opts *o, long pid, sonde_about *a, double *cpu_before)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    a->start_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    for (char **arg = o->cmd; arg && *arg; arg++)
        if (sonde_about_add_arg(a, *arg, strlen(*arg)) < 0)
            break;
    char cwd[PATH_MAX];
    if (!o->cmd) {
        take_cmdline(pid, a);
        take_cwd(pid, a);
    } else if (getcwd(cwd, sizeof cwd)) {
        sonde_about_set(&a->cwd, cwd, strlen(cwd));
    }
    *cpu_before = o->cmd ? 0 : cpu_of(pid);
}

/* ... and once it ended: the span sampled, the processes, the CPU the
 * root used meanwhile (a command's: all of it, its waited-for children
 * included). */
static void about_end(long pid, const sonde_sampler_counts *c, double cpu_before,
                      sonde_about *a)
{
    double cpu = cpu_of(pid);
    a->wall = c->seconds;
    a->processes = c->processes;
    if (cpu >= 0 && cpu_before >= 0)
        a->cpu = cpu - cpu_before;
}

static int write_profile(const record_opts *o, const cli_output *out, sonde_profile *p)
{
    sonde_stats s;
    sonde_stats_init(&s);
    sonde_format_job job = { .format = sonde_format_find(o->format), .profile = p, .stats = &s };
    int rc = sonde_stats_from_profile(&s, p) < 0 ? cli_fail(SONDE_EXIT_FAILED, "out of memory")
                                                 : cli_output_fill(out, sonde_format_fill, &job);
    sonde_stats_free(&s);
    return rc;
}

/* --every: what writing an interval's profile needs. */
typedef struct interval_writer {
    const record_opts *o;
    cli_every *every;
    long pid;
    int64_t start_ns;      /* when sampling began, ns since the epoch */
    double cpu_before;     /* the CPU the root had used as the interval began; < 0: unknown */
} interval_writer;

/* The profile of [from_ns, to_ns) of sampling into the folder, saying
 * what was profiled then.  0, or an exit code after printing why not. */
static int write_interval(interval_writer *iw, sonde_profile *p, const sonde_sampler_counts *c,
                          uint64_t from_ns, uint64_t to_ns)
{
    double cpu = cpu_of(iw->pid);
    p->about.start_ns = iw->start_ns + (int64_t)from_ns;
    p->about.wall = (double)(to_ns - from_ns) * 1e-9;
    p->about.cpu = cpu >= 0 && iw->cpu_before >= 0 ? cpu - iw->cpu_before : -1;
    p->about.processes = c->processes;
    iw->cpu_before = cpu;
    /* The interval's own functions only: the profile keeps every one seen
     * since sampling began (its caches name them). */
    sonde_profile compact;
    if (sonde_profile_compact(&compact, p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    compact.about = p->about; /* lent for the writing */
    cli_output out;
    int rc = cli_every_next(iw->every, p->about.start_ns, &out);
    if (rc == 0)
        rc = write_profile(iw->o, &out, &compact);
    sonde_about_init(&compact.about);
    sonde_profile_free(&compact);
    return rc ? rc : cli_every_written(iw->every, &out);
}

/* The sampler's on_interval: a whole interval ended. */
static int interval_ended(void *ctx, sonde_profile *p, const sonde_sampler_counts *c,
                          uint64_t from_ns)
{
    interval_writer *iw = ctx;
    return write_interval(iw, p, c, from_ns, from_ns + (uint64_t)(iw->o->s.every * 1e9));
}

/* The summary on stderr: what was sampled, what was kept and why the rest
 * was not, and where it went. */
/* 1 when sampling stopped because -d passed: not the process's end, nor
 * Ctrl-C. */
static int duration_passed(const record_opts *o, const sonde_sampler_counts *c)
{
    return o->s.duration > 0 && !c->ended && !stop_requested;
}

/* The summary's line on the mode: which, what a sample of it counts, and
 * in cpu mode the CPU the profile weighs. */
static void print_mode(const record_opts *o, const sonde_sampler_counts *c)
{
    fprintf(stderr, "sonde: --mode %s: %s", sonde_sample_mode_name(o->s.mode),
            sonde_sample_mode_meaning(o->s.mode));
    if (o->s.mode == SONDE_MODE_CPU) {
        fprintf(stderr, "; %.3f CPU-s in the kept samples (a table's nsamples counts CPU time in "
                "periods of 1/%.0f s)", (double)c->cpu_ns * 1e-9, o->s.rate);
        if (c->cpu_unknown)
            fprintf(stderr, "; %llu samples' CPU could not be read, each weighed one period",
                    (unsigned long long)c->cpu_unknown);
    }
    fprintf(stderr, "\n");
}

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
        fprintf(stderr, ", %llu idle ones dropped (not running, or no CPU since their last "
                "sample; --mode wall keeps them)", (unsigned long long)c->idle);
    if (c->not_gil)
        fprintf(stderr, ", %llu not holding the GIL dropped (--mode gil)",
                (unsigned long long)c->not_gil);
    if (c->not_except)
        fprintf(stderr, ", %llu handling no exception dropped (--mode exception)",
                (unsigned long long)c->not_except);
    if (c->filtered)
        fprintf(stderr, ", %llu stacks of threads --thread leaves out not read",
                (unsigned long long)c->filtered);
    fprintf(stderr, ", %llu torn reads skipped\n", (unsigned long long)c->torn);
    if (o->s.async_all)
        fprintf(stderr, "sonde: --async-mode all: %llu stacks of suspended asyncio tasks, each "
                "on the thread whose loop holds it\n", (unsigned long long)c->tasks);
    if (c->blank)
        fprintf(stderr, "sonde: %llu sample%s read no thread stack: the interpreter was not "
                "running Python code yet, or any more, or no thread was in Python code\n",
                (unsigned long long)c->blank, c->blank == 1 ? "" : "s");
    if (c->gc) {
        uint64_t all = o->s.mode == SONDE_MODE_CPU ? c->cpu_ns : c->kept;
        fprintf(stderr, "sonde: %.1f%% of the profile (%llu kept stack%s) is garbage "
                "collection, under \"%s\" frames\n", all ? 100.0 * (double)c->gc_weight / all : 0,
                (unsigned long long)c->gc, c->gc == 1 ? "" : "s", SONDE_SAMPLER_GC);
    }
    if (c->truncated)
        fprintf(stderr, "sonde: %llu stacks were deeper than %d frames: their innermost %d "
                "frames are kept, under \"%s\"\n",
                (unsigned long long)c->truncated, SONDE_WALK_MAX_DEPTH, SONDE_WALK_MAX_DEPTH,
                SONDE_SAMPLER_TRUNCATED);
    if (c->denied)
        fprintf(stderr, "sonde: at %.2f s sonde lost the right to read process %d (it made "
                "itself undumpable, or changed its user: run sonde as root to follow it); its "
                "samples end there%s\n", c->denied_at, c->denied_pid,
                c->denied > 1 ? ", as do those of other processes" : "");
    if (c->cut)
        fprintf(stderr, "sonde: %llu snapshots were cut after 1 s of walking the process's "
                "thread list (its threads after that point were not read that time)\n",
                (unsigned long long)c->cut);
    if (o->s.native)
        o->s.native->summary(stderr, &c->native);
    if (c->kept == 0 && !c->idle && c->ticks < 3 && duration_passed(o, c))
        fprintf(stderr, "sonde: no stack was kept: -d %g s allowed %llu sample%s, too few to "
                "see Python code running (give a longer -d)\n", o->s.duration,
                (unsigned long long)c->ticks, c->ticks == 1 ? "" : "s");
    else if (c->kept == 0)
        fprintf(stderr, "sonde: no stack was kept: %s\n",
                c->idle ? "no thread read used CPU (--mode wall keeps idle threads)"
                        : "no Python code was seen running");
    print_mode(o, c);
    if (path)
        fprintf(stderr, "sonde: wrote %s (%s)\n", path, o->format);
}

/* --every's line of the summary: the files written and kept. */
static void print_files(const record_opts *o, const cli_every *e)
{
    fprintf(stderr, "sonde: wrote %llu file%s (%s) into %s, one per %g s of sampling, the last "
            "%s", (unsigned long long)e->written, e->written == 1 ? "" : "s", o->format, e->dir,
            o->s.every, e->newest);
    if (e->removed)
        fprintf(stderr, "; removed the %llu oldest for %s (%zu stay, %llu bytes)",
                (unsigned long long)e->removed,
                !e->by_bytes ? "--keep" : e->by_bytes == e->removed ? "--keep-bytes"
                                                                    : "--keep and --keep-bytes",
                e->nfiles, e->bytes);
    fprintf(stderr, "\n");
}

/* Why nothing could be recorded, in one line. */
static void print_nothing(const record_opts *o, const sonde_family *f, long pid,
                          const sonde_sampler_counts *c)
{
    if (duration_passed(o, c) && o->cmd)
        cli_fail(0, "-d %g s passed before %s started a Python interpreter sonde could read: "
                 "nothing recorded (give a longer -d)", o->s.duration, o->cmd[0]);
    else if (duration_passed(o, c))
        cli_fail(0, "-d %g s passed before process %ld's Python interpreter could be read: "
                 "nothing recorded (give a longer -d)", o->s.duration, pid);
    else if (f->last_message[0])
        cli_fail(0, "%s: nothing recorded", f->last_message);
    else if (o->cmd)
        cli_fail(0, "%s ran no Python process that sonde could read: nothing recorded",
                 o->cmd[0]);
    else
        cli_fail(0, "process %ld ended before its Python interpreter could be read: nothing "
                 "recorded", pid);
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    record_opts o = { .s = { .rate = 100 } };
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return cli_exit(rc);
    if (o.native && !env->native)
        return cli_fail(SONDE_EXIT_FAILED, "--native needs the sonde command (it reads DWARF "
                        "through libdw, which python3 -m sonde leaves out): run 'sonde record "
                        "--native ...' from the sonde command's install or build/bin/sonde");
    o.s.native = o.native ? env->native : NULL;
    /* -o is checked before anything starts; sonde-PID.EXT once the
     * command has a pid (the folder it goes to is checked before). */
    cli_output out;
    cli_every every = { 0 };
    char name[64];
    if (o.out || o.pid)
        rc = open_output(&o, o.pid, name, sizeof name, &out, &every);
    else if (access(".", W_OK | X_OK) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "cannot write in the current folder: %s (give -o FILE)",
                      strerror(errno));
    if (rc != 0)
        return rc;

    /* a stop signal sonde was started with ignored (nohup) stays ignored */
    struct sigaction stop = { .sa_sigaction = on_stop, .sa_flags = SA_SIGINFO }, old[NSTOP];
    sigemptyset(&stop.sa_mask);
    for (int i = 0; i < NSTOP; i++) {
        sigaction(stop_signals[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(stop_signals[i], &stop, NULL);
    }

    long pid = o.pid;
    int started = o.cmd != NULL;
    if (started && (pid = start_command(o.cmd)) < 0) {
        restore_stop_signals(old);
        return SONDE_EXIT_FAILED;
    }
    if (started) {
        command_pid = (sig_atomic_t)pid;
        if (unpassed_stop)
            kill((pid_t)pid, unpassed_stop);
    }
    if (started && !o.out)
        rc = open_output(&o, pid, name, sizeof name, &out, &every);
    every.pid = pid; /* -o DIR -- CMD: the files are named after the command's pid */

    sonde_profile p;
    sonde_family *family = malloc(sizeof *family);
    if (!family || sonde_profile_init(&p) < 0) {
        free(family);
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    sonde_family_init(family, (int)pid, o.s.subprocesses, &p);
    sonde_sampler_counts counts = { 0 };
    double cpu_before;
    about_begin(&o, pid, &p.about, &cpu_before);
    interval_writer iw = { .o = &o, .every = &every, .pid = pid, .start_ns = p.about.start_ns,
                           .cpu_before = cpu_before };
    if (o.s.every) {
        o.s.on_interval = interval_ended;
        o.s.interval_ctx = &iw;
    }
    char err[512];
    if (rc != 0) {
        /* sonde-PID.EXT cannot be written: the command runs unsampled */
    } else if (!started && sonde_family_attach(family, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else if ((rc = sonde_sampler_run(family, &p, &o.s, &stop_requested, &counts)) ==
               SONDE_SAMPLER_NO_MODE) {
        rc = cli_fail(SONDE_EXIT_USAGE, "%s", counts.error);
        if (started)
            kill((pid_t)pid, SIGTERM); /* not sampled: it is not left running unseen */
    } else if (rc < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", rc == SONDE_SAMPLER_FAILED
                      ? counts.error : "out of memory while sampling");
    } else if (o.s.threads && o.s.threads->kept == 0 && counts.processes > 0) {
        char names[512];
        sonde_thread_filter_describe(o.s.threads, names, sizeof names);
        rc = cli_fail(SONDE_EXIT_FAILED, "--thread %s: no thread of the process%s sampled has "
                      "this name or id (names: threading's, or /proc's comm; ids: the kernel's "
                      "thread ids): nothing recorded", names, counts.processes > 1 ? "es" : "");
    } else if (counts.interval_failed) {
        rc = SONDE_EXIT_FAILED; /* an interval's file could not be written: said */
    } else if (counts.processes == 0) {
        print_nothing(&o, family, pid, &counts);
        rc = SONDE_EXIT_FAILED;
    } else if (o.s.every) {
        /* the interval sampling ended in, unless it is empty and follows others */
        uint64_t end_ns = (uint64_t)(counts.seconds * 1e9);
        if (p.nthreads > 0 || every.written == 0)
            rc = write_interval(&iw, &p, &counts, counts.interval_ns,
                                end_ns > counts.interval_ns ? end_ns : counts.interval_ns);
        if (rc == 0) {
            print_summary(&o, &counts, NULL);
            print_files(&o, &every);
        }
    } else {
        about_end(pid, &counts, cpu_before, &p.about);
        if ((rc = write_profile(&o, &out, &p)) == 0)
            print_summary(&o, &counts, out.name);
    }
    sonde_family_free(family);
    free(family);
    cli_every_free(&every);
    sonde_profile_free(&p);
    sonde_thread_filter_free(&o.sample.threads);
    if (started) {
        /* The command decides its own end (Ctrl-C reached it too), and its
         * exit code is the answer, unless sonde could not profile it. */
        int status = 0, waited;
        while ((waited = waitpid((pid_t)pid, &status, 0)) < 0 && errno == EINTR)
            ;
        restore_stop_signals(old);
        /* a native capture's wait may have taken its end (task.h) */
        if (waited < 0 && !sonde_proc_reaped_take((int)pid, &status) && rc == 0)
            return cli_fail(SONDE_EXIT_FAILED, "the exit status of process %ld was lost", pid);
        return rc == SONDE_EXIT_FAILED || rc == SONDE_EXIT_USAGE ? rc : launch_exit_code(status);
    }
    restore_stop_signals(old);
    return rc;
}
