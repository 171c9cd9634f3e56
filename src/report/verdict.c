/* verdict.c - resource summary and verdict; see verdict.h. */
#include "verdict.h"

#include <ctype.h>
#include <string.h>

static const struct {
    enum sonde_wait kind;
    const char *needle;
} wait_patterns[] = {
    { SONDE_WAIT_SLEEP, "sleep" },
    { SONDE_WAIT_LOCK, "acquire" },
    { SONDE_WAIT_LOCK, "lock' objects" },
    { SONDE_WAIT_CHILD, "waitpid" },
    { SONDE_WAIT_CHILD, "posix.wait" },
    { SONDE_WAIT_IO, "select" },
    { SONDE_WAIT_IO, "poll" },
    { SONDE_WAIT_IO, "recv" },
    { SONDE_WAIT_IO, "send" },
    { SONDE_WAIT_IO, "accept" },
    { SONDE_WAIT_IO, "connect" },
    { SONDE_WAIT_IO, "read" },
    { SONDE_WAIT_IO, "write" },
    { SONDE_WAIT_IO, "getaddrinfo" },
};

static const char *const wait_names[SONDE_WAIT_KINDS] = {
    "sleep", "locks", "child processes", "I/O",
};

/* The same kinds as they read before "calls": "went to lock calls". */
static const char *const wait_call_names[SONDE_WAIT_KINDS] = {
    "sleep", "lock", "child-process", "I/O",
};

/* 1 when needle starts a word of label ("read" in "posix.read", not in
 * "_thread"). */
static int has_word(const char *label, const char *needle)
{
    for (const char *m = strstr(label, needle); m; m = strstr(m + 1, needle))
        if (m == label || !(isalnum((unsigned char)m[-1]) || m[-1] == '_'))
            return 1;
    return 0;
}

int sonde_verdict_wait_kind(const char *label)
{
    if (strstr(label, "'generator' objects") || strstr(label, "'coroutine' objects"))
        return -1; /* send/throw resume Python code: not waiting */
    for (size_t i = 0; i < sizeof wait_patterns / sizeof wait_patterns[0]; i++)
        if (has_word(label, wait_patterns[i].needle))
            return (int)wait_patterns[i].kind;
    return -1;
}

/* The third resources line: where the CPU time went apart from the
 * program's own process, and how long it waited for a CPU. */
static void write_shares(sonde_buf *b, const sonde_usage *u)
{
    int children = u->children_cpu >= 0.0005, delay = u->run_delay >= 0.0005;
    if (!children && !delay)
        return;
    sonde_buf_puts(b, "          ");
    if (children)
        sonde_buf_printf(b, " child processes used %.3f s of the CPU%s", u->children_cpu,
                         delay ? ";" : "");
    if (delay)
        sonde_buf_printf(b, " waited %.3f s for a CPU (the main thread, ready to run)",
                         u->run_delay);
    sonde_buf_putc(b, '\n');
}

/* The busiest kind of wait among the profile's C calls: its index into
 * waited (which gets every kind's seconds), with *top its function. */
static int busiest_wait(const sonde_profile *p, const sonde_stats *s,
                        double waited[SONDE_WAIT_KINDS], uint32_t *top_func)
{
    uint32_t top[SONDE_WAIT_KINDS];
    for (int k = 0; k < SONDE_WAIT_KINDS; k++) {
        waited[k] = 0;
        top[k] = SONDE_NO_FUNC;
    }
    for (uint32_t f = 0; f < s->nfuncs && f < p->nfuncs; f++) {
        if (!s->funcs[f].present || p->funcs[f].kind != SONDE_FUNC_C)
            continue;
        int k = sonde_verdict_wait_kind(sonde_profile_str(p, p->funcs[f].name));
        if (k < 0)
            continue;
        waited[k] += s->funcs[f].tottime;
        if (top[k] == SONDE_NO_FUNC || s->funcs[f].tottime > s->funcs[top[k]].tottime)
            top[k] = f;
    }
    int most = 0;
    for (int k = 1; k < SONDE_WAIT_KINDS; k++)
        if (waited[k] > waited[most])
            most = k;
    *top_func = top[most];
    return most;
}

void sonde_verdict_write(sonde_buf *b, const sonde_usage *u, const sonde_profile *p,
                         const sonde_stats *s)
{
    double cpu = u->user + u->sys;
    double util = u->wall > 0 ? cpu / u->wall : 0;
    double children = u->children_cpu > 0 ? u->children_cpu : 0;
    double queued = u->run_delay > 0 ? u->run_delay : 0;
    sonde_buf_printf(b, "resources: wall %.3f s, CPU %.3f s (user %.3f s, sys %.3f s), "
                     "CPU utilisation %.0f%%\n", u->wall, cpu, u->user, u->sys, util * 100);
    sonde_buf_printf(b, "           max RSS %.1f MB, page faults %ld major / %ld minor, "
                     "context switches %ld voluntary / %ld involuntary\n",
                     (double)u->max_rss_kb / 1024.0, u->major_faults, u->minor_faults,
                     u->voluntary_switches, u->involuntary_switches);
    write_shares(b, u);

    double waited[SONDE_WAIT_KINDS];
    uint32_t top;
    int most = busiest_wait(p, s, waited, &top);

    sonde_buf_puts(b, "verdict:   ");
    int stalled = u->memory_stall >= 0.02 * u->wall && u->memory_stall > 0;
    int swapped = u->swap_ins >= 100;
    if (u->major_faults >= 100 && (double)u->major_faults >= 10 * u->wall &&
        (stalled || swapped)) {
        sonde_buf_printf(b, "memory pressure: %ld major page faults (pages read back from "
                         "disk or swap) while the machine ", u->major_faults);
        if (stalled)
            sonde_buf_printf(b, "stalled %.3f s for memory%s", u->memory_stall,
                             swapped ? " and " : "");
        if (swapped)
            sonde_buf_printf(b, "swapped in %lld pages", u->swap_ins);
        sonde_buf_puts(b, "; use less memory or give the machine more\n");
    } else if (children >= 0.25 && children >= 0.1 * u->wall && children >= cpu - children) {
        /* A quarter of a second at least: what starts the interpreter (a
         * pyenv shim runs a few processes) is not the program's work. */
        sonde_buf_printf(b, "the CPU went to child processes: they used %.3f s of it, the "
                         "program's own process %.3f s; %s\n", children, cpu - children,
                         u->children_profiled
                             ? "the functions above are theirs and its, each under its "
                               "process's frame"
                             : "the functions above are only the program's own: see the "
                               "children's with sonde run --subprocesses");
    } else if (util >= 0.8) {
        sonde_buf_printf(b, "CPU-bound: the CPU was busy %.0f%% of the wall time", util * 100);
        if (util >= 1.5)
            sonde_buf_printf(b, " (about %.1f cores)", util);
        sonde_buf_puts(b, "; the functions above are where it went\n");
    } else if (queued >= 0.1 * u->wall && util + queued / u->wall >= 0.8) {
        sonde_buf_printf(b, "CPU-bound on a busy machine: the program ran %.0f%% of the wall "
                         "time and waited %.0f%% (%.3f s) for a CPU that other processes had "
                         "(%ld involuntary context switches); the functions above are where "
                         "its CPU time went\n", util * 100, 100 * queued / u->wall, queued,
                         u->involuntary_switches);
    } else if (waited[most] >= 0.1 * u->wall && top != SONDE_NO_FUNC) {
        sonde_buf_printf(b, "waiting on %s: the CPU was busy only %.0f%% of the wall time; "
                         "%.3f s went to %s calls", wait_names[most], util * 100, waited[most],
                         wait_call_names[most]);
        /* Threads wait at once: their waits add up past the wall time. */
        if (waited[most] > u->wall && p->nthreads > 1)
            sonde_buf_printf(b, " (its %u threads' added up)", p->nthreads);
        else if (waited[most] > u->wall)
            sonde_buf_puts(b, " (its threads' added up)");
        sonde_buf_printf(b, ", most in %s", sonde_profile_str(p, p->funcs[top].name));
        /* A launcher, a reloader (werkzeug's runs the program again in a
         * child), a build step: the work is the child's. */
        if (most == SONDE_WAIT_CHILD && !u->children_profiled)
            sonde_buf_puts(b, "; sonde run --subprocesses profiles the children too");
        sonde_buf_putc(b, '\n');
    } else if (queued >= 0.1 * u->wall) {
        sonde_buf_printf(b, "waiting: the CPU was busy only %.0f%% of the wall time, and the "
                         "program waited %.0f%% (%.3f s) for a CPU that other processes had; "
                         "the rest went in no sleep, I/O or lock call sonde saw (start-up, "
                         "page faults, or time outside the profiled code)\n", util * 100,
                         100 * queued / u->wall, queued);
    } else {
        sonde_buf_printf(b, "waiting: the CPU was busy only %.0f%% of the wall time, in no "
                         "sleep, I/O or lock call sonde saw (start-up, page faults, or time "
                         "outside the profiled code)\n", util * 100);
    }
}
