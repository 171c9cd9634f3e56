/* cmd_top.c - sonde top: a live view of where a running process spends
 * its time, like top(1) for Python functions.
 *
 * Samples continuously (sampler.h) and redraws once a second: a header
 * with the process, rate, thread count and how often a thread held the
 * GIL, the busiest threads with their CPU share (the kernel's count) and
 * GIL share, then functions by their own share of the samples, with
 * their total share (anywhere on the stack).  Files are named as py-spy names
 * them: below site-packages, the standard library or the process's
 * working directory, so that line numbers stay on screen.  The view fits
 * the terminal's width, uses the alternate screen, and gives the terminal
 * back as it found it on q, Ctrl-C, or when the process ends.  Without a
 * terminal on its output it refuses in one line, pointing at record and
 * dump. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/grow.h"
#include "../core/short_path.h"
#include "../sampler/sampler.h"
#include "commands.h"
#include "options.h"
#include "sample_opts.h"

typedef struct top_opts {
    long pid, rate;
    cli_sample_opts sample;   /* --mode, --idle, --gil, --thread */
    int native, native_all, async;
} top_opts;

static const cli_opt option_table[] = {
    { .short_name = 'p', .long_name = "pid", .arg = "PID", .type = CLI_PID,
      .offset = offsetof(top_opts, pid), .help = "the running process to watch" },
    { .short_name = 'r', .long_name = "rate", .arg = "HZ", .type = CLI_COUNT,
      .offset = offsetof(top_opts, rate), .min = 1, .max = 10000,
      .what = "needs a rate from 1 to 10000 samples per second",
      .help = "samples per second (default 100)" },
    CLI_SAMPLE_OPTIONS(top_opts, sample),
    { .long_name = "async", .type = CLI_FLAG, .offset = offsetof(top_opts, async), .set = 1,
      .help = "a running asyncio task's functions count under the tasks\n"
              "awaiting it, each a \"<task NAME>\" row" },
    CLI_NATIVE_OPTIONS(top_opts, native, native_all,
                       "native functions too, on every thread (one running\n"
                       "Python is stopped for the microseconds its stack takes\n"
                       "to copy; others are read by perf where the kernel allows)"),
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_top = {
    .name = "top",
    .summary = "live view of a running Python process (replaces py-spy top)",
    .synopsis = "-p PID [-r HZ] [--mode cpu|wall|gil|exception] [--thread THREAD]...\n"
                "[--async] [--native | --native-all]",
    .about = "A live view of a running Python process: functions by the share of\n"
             "samples spent in them (own) and under them (total), refreshed every\n"
             "second; in --mode cpu (the default) each sample weighs the CPU time its\n"
             "thread used since its previous one.  Press q or Ctrl-C to quit.  The process is only read, never\n"
             "stopped (py-spy's --nonblocking is accepted and changes nothing); when\n"
             "PID is not Python (a shell, a wrapper), the Python processes it started\n"
             "are shown.  --native adds the C and C++ functions of every thread.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

/* What top shows of each thread: its CPU share (the kernel's count for
 * the thread, since top first saw it), how often it held the GIL and how
 * often it collected garbage. */
#define TOP_THREADS_KEPT 256   /* threads followed; more are counted, not shown */
#define TOP_THREADS_SHOWN 4    /* the busiest, on the screen */

typedef struct top_thread {
    uint64_t tid;
    char name[64];
    uint64_t first_ns, first_cpu_ns;   /* when top first saw it, and its CPU then */
    int cpu_known;
    uint64_t seen, gil;                /* snapshots that read it, held the GIL */
    uint64_t weight, gc_weight;        /* its kept samples' weight (--mode cpu: its CPU
                                          time), and theirs collecting garbage */
    double cpu_share;                  /* at the last redraw */
} top_thread;

typedef struct top_state {
    sonde_profile *profile;
    const sonde_family *family;
    const sonde_sampler_opts *opts;
    double rate;
    double seconds_per_unit;   /* of own and total: 1/rate, or 1e-9 in cpu mode */
    uint64_t *own, *total;     /* per function id */
    uint32_t ncounts;
    uint32_t *seen_at;         /* per function: the last stack that counted it */
    size_t own_cap, total_cap, seen_cap;
    uint64_t stacks, gil_ticks, gc_ticks, ticks;   /* stacks: their weight, in all */
    uint32_t gc_func;          /* the "<GC>" row's function: own time in the collector */
    uint32_t nstacks;          /* stacks counted (for seen_at) */
    uint32_t threads;          /* in the last snapshot */
    uint32_t reading;          /* in the snapshot being read, so far */
    uint64_t started, drawn;   /* sonde_clock_ns() */
    top_thread thread[TOP_THREADS_KEPT];
    uint32_t nthread;          /* followed (at most TOP_THREADS_KEPT) */
    int quit;
} top_state;

static volatile sig_atomic_t interrupted; /* set by the SIGINT/SIGTERM handler, read by
                                             the sampling loop: one thread */

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int grow_counts(top_state *t)
{
    uint32_t n = t->profile->nfuncs;
    if (n <= t->ncounts)
        return 0;
    uint64_t *own = sonde_grow(t->own, &t->own_cap, n, sizeof *own, UINT32_MAX);
    if (own)
        t->own = own;
    uint64_t *total = sonde_grow(t->total, &t->total_cap, n, sizeof *total, UINT32_MAX);
    if (total)
        t->total = total;
    uint32_t *seen = sonde_grow(t->seen_at, &t->seen_cap, n, sizeof *seen, UINT32_MAX);
    if (seen)
        t->seen_at = seen;
    if (!own || !total || !seen)
        return -1;
    for (uint32_t i = t->ncounts; i < n; i++) {
        t->own[i] = t->total[i] = 0;
        t->seen_at[i] = UINT32_MAX;
    }
    t->ncounts = n;
    return 0;
}

static int terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    return 80;
}

static int terminal_height(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row >= 10)
        return ws.ws_row;
    return 24;
}

/* The working directory of the process the view names, or "". */
static void process_cwd(int pid, char *out, size_t outlen)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/cwd", pid);
    ssize_t n = readlink(link, out, outlen - 1);
    out[n > 0 && (size_t)n < outlen - 1 ? n : 0] = '\0';
}

/* Function ids by their own samples, then their total, most first (a
 * qsort_r comparator; ctx is the top_state). */
static int by_own(const void *a, const void *b, void *ctx)
{
    const top_state *t = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t ox = t->own[x], oy = t->own[y];
    if (ox != oy)
        return ox > oy ? -1 : 1;
    uint64_t tx = t->total[x], ty = t->total[y];
    return tx > ty ? -1 : tx < ty;
}

/* The thread with kernel id tid, followed from its first sight (its
 * name read then); NULL past TOP_THREADS_KEPT. */
static top_thread *followed_thread(top_state *t, sonde_walker *w, const sonde_thread_sample *s)
{
    for (uint32_t i = 0; i < t->nthread; i++)
        if (t->thread[i].tid == s->native_id)
            return &t->thread[i];
    if (t->nthread == TOP_THREADS_KEPT)
        return NULL;
    top_thread *th = &t->thread[t->nthread++];
    memset(th, 0, sizeof *th);
    th->tid = s->native_id;
    if (!w || sonde_walker_thread_name(w, s, th->name, sizeof th->name) < 0)
        snprintf(th->name, sizeof th->name, "thread %llu", (unsigned long long)s->native_id);
    th->first_ns = sonde_clock_ns();
    th->cpu_known = w && sonde_walker_thread_cpu(w, th->tid, &th->first_cpu_ns) == 0;
    return th;
}

/* Busiest first (a qsort comparator). */
static int by_cpu(const void *a, const void *b)
{
    double x = ((const top_thread *)a)->cpu_share, y = ((const top_thread *)b)->cpu_share;
    return x > y ? -1 : x < y;
}

/* The busiest threads' lines: CPU share since first seen, GIL share of
 * the snapshots that read them (threads that ended are forgotten).  The
 * number of lines drawn. */
static int draw_threads(top_state *t, int width)
{
    sonde_walker *w = t->family->count > 0 ? t->family->members[0].walker : NULL;
    uint64_t now = sonde_clock_ns();
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->nthread; i++) {
        top_thread *th = &t->thread[i];
        uint64_t cpu;
        th->cpu_share = 0;
        if (!w || sonde_walker_thread_cpu(w, th->tid, &cpu) < 0)
            continue; /* it has ended: forgotten */
        t->thread[kept++] = *th;
        th = &t->thread[kept - 1];
        if (!th->cpu_known) {
            th->cpu_known = 1;
            th->first_ns = now;
            th->first_cpu_ns = cpu;
        } else if (now > th->first_ns && cpu >= th->first_cpu_ns) {
            th->cpu_share = (double)(cpu - th->first_cpu_ns) / (double)(now - th->first_ns);
        }
    }
    t->nthread = kept;
    qsort(t->thread, t->nthread, sizeof t->thread[0], by_cpu);
    int lines = 0;
    for (uint32_t i = 0; i < t->nthread && i < TOP_THREADS_SHOWN; i++, lines++) {
        const top_thread *th = &t->thread[i];
        int room = width - 37 > 0 ? width - 37 : 0;
        printf("  %-*.*s %5.1f%% CPU %5.1f%% GIL %5.1f%% GC\n", room, room, th->name,
               100.0 * th->cpu_share, th->seen ? 100.0 * (double)th->gil / (double)th->seen : 0.0,
               th->weight ? 100.0 * (double)th->gc_weight / (double)th->weight : 0.0);
    }
    uint32_t rest = t->threads > t->nthread ? t->threads : t->nthread; /* the last snapshot's */
    if (rest > TOP_THREADS_SHOWN) {
        printf("  (and %u more thread%s)\n", rest - TOP_THREADS_SHOWN,
               rest - TOP_THREADS_SHOWN == 1 ? "" : "s");
        lines++;
    }
    return lines;
}

static void draw(top_state *t)
{
    int width = terminal_width(), rows = terminal_height() - 6;
    double elapsed = (double)(sonde_clock_ns() - t->started) * 1e-9;
    const sonde_family *fam = t->family;
    char python[32] = "no Python yet", cwd[4096];
    if (fam->count > 0)
        snprintf(python, sizeof python, "Python %d.%d", fam->members[0].walker->runtime.major,
                 fam->members[0].walker->runtime.minor);
    process_cwd(fam->count > 0 ? fam->members[0].pid : fam->root, cwd, sizeof cwd);
    printf("\033[H\033[2J");
    printf("sonde top: pid %d, %s   %.0f Hz, %.0f s, %u thread%s, GIL held %.0f%%, "
           "GC %.0f%%\n", fam->root, python, t->rate, elapsed, t->threads,
           t->threads == 1 ? "" : "s", t->ticks ? 100.0 * (double)t->gil_ticks / (double)t->ticks : 0.0,
           t->ticks ? 100.0 * (double)t->gc_ticks / (double)t->ticks : 0.0);
    printf("--mode %s (%s); press q or Ctrl-C to quit\n", sonde_sample_mode_name(t->opts->mode),
           t->opts->mode == SONDE_MODE_CPU ? "times are CPU time" : "a sample is 1/rate s");
    rows -= draw_threads(t, width);
    putchar('\n');
    printf("\033[7m%6s %7s %8s %9s  %-*s\033[0m\n", "%Own", "%Total", "OwnTime", "TotalTime",
           width - 35, "Function (file:line)");
    uint32_t n = 0, *ids = malloc((t->ncounts + 1) * sizeof *ids);
    if (!ids)
        return;
    for (uint32_t f = 0; f < t->ncounts; f++)
        if (t->total[f])
            ids[n++] = f;
    qsort_r(ids, n, sizeof *ids, by_own, t);
    for (uint32_t i = 0; i < n && (int)i < rows; i++) {
        const sonde_func *f = &t->profile->funcs[ids[i]];
        char label[1024];
        const char *file = sonde_profile_str(t->profile, f->file);
        if (strcmp(file, "~") == 0) /* sonde's own frame (<GC>): no place in a file */
            snprintf(label, sizeof label, "%s", sonde_profile_str(t->profile, f->qualname));
        else
            snprintf(label, sizeof label, "%s (%s:%d)", sonde_profile_str(t->profile, f->qualname),
                     sonde_short_path(file, cwd), f->line);
        int room = width - 35;
        printf("%5.1f%% %6.1f%% %7.2fs %8.2fs  %.*s\n",
               100.0 * (double)t->own[ids[i]] / (double)(t->stacks ? t->stacks : 1),
               100.0 * (double)t->total[ids[i]] / (double)(t->stacks ? t->stacks : 1),
               (double)t->own[ids[i]] * t->seconds_per_unit,
               (double)t->total[ids[i]] * t->seconds_per_unit,
               room > 0 ? room : 0, label);
    }
    free(ids);
    fflush(stdout);
    t->drawn = sonde_clock_ns();
}

static int read_key_quit(void)
{
    struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
    char c;
    while (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) {
        if (read(STDIN_FILENO, &c, 1) != 1)
            return 0;
        if (c == 'q' || c == 'Q' || c == 3)
            return 1;
    }
    return 0;
}

static int on_tick(void *ctx, const sonde_thread_sample *threads, uint32_t n, int more)
{
    top_state *t = ctx;
    if (grow_counts(t) < 0)
        return 1;
    t->reading += n;
    if (!more) { /* the snapshot's last batch */
        t->ticks++;
        t->threads = t->reading;
        t->reading = 0;
    }
    int gil = 0, gc = 0;
    sonde_walker *w = t->family->count > 0 ? t->family->members[0].walker : NULL;
    for (uint32_t i = 0; i < n; i++) {
        const sonde_thread_sample *s = &threads[i];
        gil |= s->holds_gil;
        gc |= s->in_gc;
        top_thread *th = s->native_id && !s->filtered ? followed_thread(t, w, s) : NULL;
        if (th) {
            th->seen++;
            th->gil += (uint64_t)s->holds_gil;
        }
        if (!sonde_sampler_keeps(t->opts, s))
            continue;
        uint64_t wt = sonde_sampler_weight(t->opts, s);
        if (th) {
            th->weight += wt;
            th->gc_weight += s->in_gc ? wt : 0;
        }
        uint32_t stack = t->nstacks++;
        t->stacks += wt;
        t->own[s->in_gc ? t->gc_func : s->frames[0].func] += wt; /* the collector's own */
        if (s->in_gc)
            t->total[t->gc_func] += wt;
        for (uint32_t k = 0; k < s->depth; k++) {
            uint32_t f = s->frames[k].func;
            if (t->seen_at[f] != stack) { /* count each function once per stack */
                t->seen_at[f] = stack;
                t->total[f] += wt;
            }
        }
    }
    t->gil_ticks += gil;
    t->gc_ticks += gc;
    if (read_key_quit() || interrupted) {
        t->quit = 1;
        return 1;
    }
    if (sonde_clock_ns() - t->drawn >= 1000000000u)
        draw(t);
    return 0;
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    top_opts opts = { .rate = 100 };
    cli_words words;
    int rc = cli_parse(&cmd_top, argc, argv, &opts, &words);
    if (rc != 0)
        return cli_exit(rc);
    if (words.count > 0)
        return cli_usage_error("top", "unknown argument '%s'", words.word[0]);
    if (!opts.pid)
        return cli_usage_error("top", "which process? give -p PID");
    long pid = opts.pid, rate = opts.rate;
    sonde_sampler_opts o = { .rate = (double)rate, .on_tick = on_tick,
                             .native_all = opts.native_all, .async = opts.async };
    if ((rc = cli_sample_mode("top", &opts.sample, &o.mode)) != 0)
        return rc;
    o.threads = opts.sample.threads.n ? &opts.sample.threads : NULL;
    if (!isatty(STDOUT_FILENO)) /* as py-spy: the view's escapes mean nothing in a file */
        return cli_fail(SONDE_EXIT_FAILED, "top draws on a terminal, and its output is not one: "
                        "use 'sonde record -p %ld' for a profile, or 'sonde dump -p %ld' for "
                        "the stacks now", pid, pid);
    opts.native |= opts.native_all;
    if (opts.native && !env->native)
        return cli_fail(SONDE_EXIT_FAILED, "--native needs the sonde command (it reads DWARF "
                        "through libdw, which python3 -m sonde leaves out): run 'sonde top "
                        "--native ...' from the sonde command's install or build/bin/sonde");

    sonde_profile p;
    sonde_family *family = malloc(sizeof *family);
    char err[512];
    if (!family || sonde_profile_init(&p) < 0) {
        free(family);
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    sonde_family_init(family, (int)pid, 0, &p);
    if (sonde_family_attach(family, err, sizeof err) < 0) {
        sonde_family_free(family);
        free(family);
        sonde_profile_free(&p);
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    }
    top_state t = { .profile = &p, .family = family, .opts = &o, .rate = (double)rate,
                    .seconds_per_unit = o.mode == SONDE_MODE_CPU ? 1e-9 : 1.0 / (double)rate,
                    .started = sonde_clock_ns(),
                    .gc_func = sonde_profile_func(&p, "~", 0, SONDE_SAMPLER_GC, SONDE_SAMPLER_GC,
                                                  SONDE_FUNC_C) };
    if (t.gc_func == SONDE_NO_FUNC) {
        sonde_family_free(family);
        free(family);
        sonde_profile_free(&p);
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    o.tick_ctx = &t;
    o.native = opts.native ? env->native : NULL;

    struct termios saved, raw;
    int tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    if (tty) {
        raw = saved;
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    struct sigaction stop = { .sa_handler = on_interrupt }, old_int, old_term;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, &old_int);
    sigaction(SIGTERM, &stop, &old_term);
    printf("\033[?1049h\033[?25l"); /* alternate screen, hidden cursor */
    draw(&t);
    sonde_sampler_counts counts;
    rc = sonde_sampler_run(family, &p, &o, &interrupted, &counts);
    printf("\033[?25h\033[?1049l"); /* give the screen back */
    fflush(stdout);
    if (tty)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (counts.ended)
        fprintf(stderr, "sonde: process %ld has ended\n", pid);
    char names[512];
    int none = rc >= 0 && o.threads && o.threads->kept == 0;
    if (none)
        sonde_thread_filter_describe(o.threads, names, sizeof names);
    free(t.own);
    free(t.total);
    free(t.seen_at);
    sonde_family_free(family);
    free(family);
    sonde_profile_free(&p);
    sonde_thread_filter_free(&opts.sample.threads);
    if (rc == SONDE_SAMPLER_NO_MODE)
        return cli_fail(SONDE_EXIT_USAGE, "%s", counts.error);
    if (rc == SONDE_SAMPLER_FAILED)
        return cli_fail(SONDE_EXIT_FAILED, "%s", counts.error);
    if (none)
        return cli_fail(SONDE_EXIT_FAILED, "--thread %s: no thread of process %ld has this name "
                        "or id (names: threading's, or /proc's comm; ids: the kernel's thread "
                        "ids)", names, pid);
    return rc < 0 ? cli_fail(SONDE_EXIT_FAILED, "out of memory") : 0;
}
