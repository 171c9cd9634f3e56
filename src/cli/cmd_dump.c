/* cmd_dump.c - sonde dump: every thread's current Python stack, once; with
 * --native every thread's whole stack, native frames merged in. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/grow.h"
#include "../sampler/asyncio_tasks.h"
#include "../sampler/sampler.h"
#include "commands.h"
#include "dump_async.h"
#include "dump_frames.h"
#include "options.h"
#include "sample_opts.h"

typedef struct dump_opts {
    long pid;
    int native, native_all, async;
    cli_sample_opts sample;   /* --mode, --idle, --gil, --thread */
    int mode;
} dump_opts;

static const cli_opt option_table[] = {
    { .short_name = 'p', .long_name = "pid", .arg = "PID", .type = CLI_PID,
      .offset = offsetof(dump_opts, pid), .help = "the running process to read" },
    CLI_SAMPLE_OPTIONS(dump_opts, sample),
    { .long_name = "async", .type = CLI_FLAG, .offset = offsetof(dump_opts, async), .set = 1,
      .help = "the asyncio tasks of each thread too, each under the task\n"
              "awaiting it, with its coroutines" },
    CLI_NATIVE_OPTIONS(dump_opts, native, native_all,
                       "native frames too, on every thread (each is stopped for the\n"
                       "microseconds its stack takes to copy)"),
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_dump = {
    .name = "dump",
    .summary = "print every thread's current Python stack (replaces py-spy dump)",
    .synopsis = "[--mode cpu|wall|gil|exception] [--thread THREAD]...\n"
                "[--native | --native-all] [--async] -p PID",
    .about = "Prints the current Python stack of every thread of a running process,\n"
             "innermost frame first, each with its file:line and the source line.  The\n"
             "process is only read, never stopped or changed (py-spy's --nonblocking is\n"
             "accepted and changes nothing).  A stack deeper than 1024 frames shows its\n"
             "innermost 1024 and says it was truncated.  --native shows every thread's\n"
             "C and C++ frames too, merged with its Python frames, and what could not\n"
             "be unwound or merged.  Every thread is shown, with the CPU time it has\n"
             "used (--mode cpu, the default, and wall), or only the thread holding the\n"
             "GIL (--mode gil), or only threads handling an exception, with its type\n"
             "(--mode exception); --thread shows only the threads it names.  --async\n"
             "adds each thread's asyncio tasks, as Python 3.14's `python -m asyncio\n"
             "pstree` prints them: every task under the task that awaits it, with the\n"
             "chain of coroutines it is suspended in, innermost first.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

/* How long dump walks a thread list (it is the target's memory, and may
 * be cyclic); the threads after that point are left out, and said. */
#define DUMP_MAX_NS 10000000000u

/* One batch of threads from *cursor (as sonde_walker_sample), or with
 * native (a state of ops) every thread's whole stack at once.  A stack
 * may be mid-update: the batch is read again, a few times, for whole
 * ones.  As sonde_walker_sample. */
static int snapshot(sonde_walker *w, const sonde_native_ops *ops, void *native, uint64_t *cursor,
                    sonde_thread_sample *threads, uint32_t *n, sonde_native_tally *tally)
{
    const uint64_t from = *cursor;
    int rc = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        uint64_t idle = 0;
        *cursor = from;
        *tally = (sonde_native_tally){ 0 };
        rc = native ? ops->sample(native, w, 1, threads, SONDE_WALK_BATCH, n, &idle, tally)
                    : sonde_walker_sample(w, cursor, threads, SONDE_WALK_BATCH, n);
        int torn = 0;
        for (uint32_t i = 0; i < *n; i++)
            torn |= threads[i].torn;
        if (rc < 0 || !torn)
            break;
    }
    if (native)
        *cursor = 0;
    if (rc == 0 && !native)
        sonde_walker_read_states(w, threads, *n);
    return rc;
}

/* The process's heading, once (*headed). */
static void put_heading(sonde_buf *b, const sonde_walker *w, long pid, int *headed)
{
    if (*headed)
        return;
    *headed = 1;
    sonde_buf_printf(b, "Process %ld: Python %d.%d (", pid, w->runtime.major, w->runtime.minor);
    sonde_buf_text_str(b, w->runtime.path);
    sonde_buf_puts(b, ")\n");
}

/* 1 when the mode shows this thread. */
static int shown(int mode, const sonde_thread_sample *s)
{
    return !s->filtered && (mode != SONDE_MODE_GIL || s->holds_gil) &&
           (mode != SONDE_MODE_EXCEPTION || s->in_except);
}

/* One thread's stack, its source lines beside. */
static void put_thread(sonde_buf *b, sonde_walker *w, long pid, const sonde_thread_sample *s)
{
    const sonde_profile *p = w->profile;
    char name[128];
    if (sonde_walker_thread_name(w, s, name, sizeof name) < 0)
        name[0] = '\0';
    sonde_buf_printf(b, "\nThread %llu%s", (unsigned long long)s->native_id, name[0] ? " " : "");
    sonde_buf_text_str(b, name);
    sonde_buf_printf(b, " (%s%s%s)",
                     s->on_cpu < 0 ? "state unknown" : s->on_cpu ? "active" : "idle",
                     s->holds_gil ? ", holds the GIL" : "",
                     s->in_gc ? ", collecting garbage" : "");
    uint64_t cpu;
    if (sonde_walker_thread_cpu(w, s->native_id, &cpu) == 0)
        sonde_buf_printf(b, " %.3f CPU-s", (double)cpu * 1e-9);
    if (s->in_except && s->exc_func != SONDE_NO_FUNC) {
        sonde_buf_putc(b, ' ');
        sonde_buf_text_str(b, sonde_profile_str(p, p->funcs[s->exc_func].name));
    }
    sonde_buf_printf(b, "%s%s\n",
                     s->torn ? " [stack changed while read: incomplete]" : "",
                     s->truncated ? " [truncated]" : "");
    for (uint32_t k = 0; k < s->depth; k++)
        cli_dump_frame(b, p, (int)pid, &s->frames[k], 4);
    if (s->truncated)
        sonde_buf_printf(b, "    [truncated] ... the stack is deeper than %d frames: its "
                         "outer frames are not shown\n", SONDE_WALK_MAX_DEPTH);
}

/* Keeps thread s (the nth shown) for --async's task lists.  0, or -1 on out of memory. */
static int remember_thread(const sonde_walker *w, const sonde_thread_sample *s,
                           cli_async_thread **kept, size_t *cap, uint64_t nth)
{
    cli_async_thread *grown = sonde_grow(*kept, cap, (size_t)nth + 1, sizeof *grown, UINT32_MAX);
    if (!grown)
        return -1;
    *kept = grown;
    cli_async_thread *t = &grown[nth];
    t->tstate = s->tstate;
    t->loop_frame = s->loop_frame;
    t->native_id = s->native_id;
    if (sonde_walker_thread_name(w, s, t->name, sizeof t->name) < 0)
        t->name[0] = '\0';
    return 0;
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    dump_opts opts = { .pid = 0 };
    cli_words words;
    int rc = cli_parse(&cmd_dump, argc, argv, &opts, &words);
    if (rc != 0)
        return cli_exit(rc);
    if (words.count > 0)
        return cli_usage_error("dump", "unknown argument '%s'", words.word[0]);
    if (!opts.pid)
        return cli_usage_error("dump", "which process? give -p PID");
    if ((rc = cli_sample_mode("dump", &opts.sample, &opts.mode)) != 0)
        return rc;
    opts.native |= opts.native_all;
    if (opts.native && !env->native)
        return cli_fail(SONDE_EXIT_FAILED, "--native needs the sonde command (it reads DWARF "
                        "through libdw, which python3 -m sonde leaves out): run 'sonde dump "
                        "--native ...' from the sonde command's install or build/bin/sonde");
    long pid = opts.pid;
    void *native = NULL;
    sonde_native_tally tally = { 0 };

    sonde_profile p;
    sonde_walker w;
    char err[512];
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    rc = sonde_walker_open(&w, (int)pid, &p, err, sizeof err);
    sonde_thread_sample *threads = rc == 0 ? malloc(SONDE_WALK_BATCH * sizeof *threads) : NULL;
    uint32_t n = 0;
    if (rc < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
        goto out;
    }
    if (!threads) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        goto out;
    }
    if (opts.native && !(native = env->native->open(&w, opts.native_all, 0, err, sizeof err))) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
        goto out;
    }
    char why[256];
    if (!sonde_sample_mode_supported(opts.mode, &w.layout, why, sizeof why)) {
        rc = cli_fail(SONDE_EXIT_USAGE, "--mode %s: %s", sonde_sample_mode_name(opts.mode), why);
        goto out;
    }
    if (opts.async && sonde_async_check(&w, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_USAGE, "%s", err);
        goto out;
    }
    w.read_exceptions = opts.mode == SONDE_MODE_EXCEPTION;
    w.filter = opts.sample.threads.n ? &opts.sample.threads : NULL;
    uint64_t cursor = 0, nshown = 0;
    const uint64_t started = sonde_clock_ns();
    rc = snapshot(&w, env->native, native, &cursor, threads, &n, &tally);
    if (rc == -1 && native) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        goto out;
    }
    if (rc < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, rc == -ESRCH ? "process %ld has ended"
                      : "cannot read the threads of process %ld (is the interpreter running yet?)",
                      pid);
        goto out;
    }
    /* Names, files and source come from the target: control bytes are
     * shown escaped, never sent to the terminal. */
    sonde_buf b;
    sonde_buf_init_stream(&b, stdout);
    /* The heading comes with the first thread shown: a --thread that
     * names none prints its one line and nothing else. */
    int headed = 0;
    cli_async_thread *async_threads = NULL; /* with --async: the threads shown */
    size_t async_cap = 0;
    for (;;) {
        for (uint32_t i = 0; i < n; i++)
            if (shown(opts.mode, &threads[i])) {
                put_heading(&b, &w, pid, &headed);
                put_thread(&b, &w, pid, &threads[i]);
                if (opts.async && remember_thread(&w, &threads[i], &async_threads, &async_cap,
                                                  nshown) < 0)
                    opts.async = -1;
                nshown++;
            }
        if (!cursor)
            break;
        if (sonde_clock_ns() - started > DUMP_MAX_NS) {
            sonde_buf_printf(&b, "\n[the thread list did not end after %.0f s of reading: the "
                             "threads after this point are not shown]\n", DUMP_MAX_NS / 1e9);
            break;
        }
        if (snapshot(&w, env->native, native, &cursor, threads, &n, &tally) < 0) {
            sonde_buf_puts(&b, "\n[the process's threads could not be read past this point: "
                           "it may have ended]\n");
            break;
        }
    }
    if (!w.filter || w.filter->kept > 0)
        put_heading(&b, &w, pid, &headed);
    int async_failed = opts.async < 0;
    if (opts.async > 0)
        async_failed = cli_dump_async(&b, &w, (int)pid, async_threads, (uint32_t)nshown, err,
                                      sizeof err) < 0;
    else if (async_failed)
        snprintf(err, sizeof err, "--async: out of memory");
    free(async_threads);
    if (nshown == 0 && headed && opts.mode != SONDE_MODE_CPU && opts.mode != SONDE_MODE_WALL)
        sonde_buf_printf(&b, "\n[no thread %s now]\n", opts.mode == SONDE_MODE_GIL
                         ? "holds the GIL" : "handles an exception");
    if (native)
        sonde_buf_putc(&b, '\n');
    int written = sonde_buf_finish(&b), e = errno;
    sonde_buf_free(&b);
    if (written == 0 && native) {
        env->native->summary(stdout, &tally);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            written = -1;
            e = errno;
        }
    }
    rc = written < 0 ? cli_fail(SONDE_EXIT_FAILED, "cannot write the standard output: %s",
                                strerror(e))
                     : 0;
    if (rc == 0 && async_failed)
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    if (rc == 0 && w.filter && w.filter->kept == 0) {
        char names[512];
        sonde_thread_filter_describe(w.filter, names, sizeof names);
        rc = cli_fail(SONDE_EXIT_FAILED, "--thread %s: no thread of process %ld has this name "
                      "or id (names: threading's, or /proc's comm; ids: the kernel's thread ids)",
                      names, pid);
    }
out:
    if (native)
        env->native->close(native);
    free(threads);
    if (w.profile)
        sonde_walker_close(&w);
    sonde_profile_free(&p);
    sonde_thread_filter_free(&opts.sample.threads);
    return rc;
}
