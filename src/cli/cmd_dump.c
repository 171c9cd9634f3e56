/* cmd_dump.c - sonde dump: every thread's current Python stack, once. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sampler/walker.h"
#include "commands.h"
#include "options.h"

typedef struct dump_opts {
    long pid;
} dump_opts;

static const cli_opt option_table[] = {
    { .short_name = 'p', .long_name = "pid", .arg = "PID", .type = CLI_PID,
      .offset = offsetof(dump_opts, pid), .help = "the running process to read" },
    { .long_name = "nonblocking", .type = CLI_IGNORED,
      .help = "accepted for py-spy's sake: sonde never stops the target" },
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_dump = {
    .name = "dump",
    .summary = "print every thread's current Python stack (replaces py-spy dump)",
    .synopsis = "-p PID",
    .about = "Prints the current Python stack of every thread of a running process,\n"
             "innermost frame first, each with its file:line and the source line.  The\n"
             "process is only read, never stopped or changed (py-spy's --nonblocking is\n"
             "accepted and changes nothing).  A stack deeper than 1024 frames shows its\n"
             "innermost 1024 and says it was truncated.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

/* Prints line `line` of file (as the process sees it: a relative name is
 * from its working directory), trimmed, if readable. */
static void print_source(int pid, const char *file, int line)
{
    char path[4200];
    if (file[0] == '<')
        return; /* <string>, <frozen ...>: no file */
    snprintf(path, sizeof path, file[0] == '/' ? "/proc/%d/root%s" : "/proc/%d/cwd/%s", pid, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char text[512];
    int at = 0;
    while (at < line && at < 1000000 && fgets(text, sizeof text, f)) {
        if (strchr(text, '\n'))
            at++;
    }
    fclose(f);
    if (at != line)
        return;
    char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    s[strcspn(s, "\r\n")] = '\0';
    if (*s)
        printf("        %s\n", s);
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    dump_opts opts = { .pid = 0 };
    cli_words words;
    int rc = cli_parse(&cmd_dump, argc, argv, &opts, &words);
    if (rc != 0)
        return cli_exit(rc);
    if (words.count > 0)
        return cli_usage_error("dump", "unknown argument '%s'", words.word[0]);
    if (!opts.pid)
        return cli_usage_error("dump", "which process? give -p PID");
    long pid = opts.pid;

    sonde_profile p;
    sonde_walker w;
    char err[512];
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    rc = sonde_walker_open(&w, (int)pid, &p, err, sizeof err);
    sonde_thread_sample *threads = rc == 0 ? malloc(SONDE_WALK_MAX_THREADS * sizeof *threads) : NULL;
    uint32_t n = 0;
    if (rc < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
        goto out;
    }
    if (!threads) {
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        goto out;
    }
    /* A stack may be mid-update: try a few snapshots for a whole one. */
    for (int attempt = 0; attempt < 5; attempt++) {
        rc = sonde_walker_sample(&w, threads, SONDE_WALK_MAX_THREADS, &n);
        int torn = 0;
        for (uint32_t i = 0; i < n; i++)
            torn |= threads[i].torn;
        if (rc < 0 || !torn)
            break;
    }
    if (rc < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, rc == -ESRCH ? "process %ld has ended"
                      : "cannot read the threads of process %ld (is the interpreter running yet?)",
                      pid);
        goto out;
    }
    sonde_walker_read_states(&w, threads, n);
    printf("Process %ld: Python %d.%d (%s)\n", pid, w.runtime.major, w.runtime.minor,
           w.runtime.path);
    for (uint32_t i = 0; i < n; i++) {
        const sonde_thread_sample *s = &threads[i];
        char name[128];
        if (sonde_walker_thread_name(&w, s, name, sizeof name) < 0)
            name[0] = '\0';
        printf("\nThread %llu%s%s (%s%s)%s%s\n", (unsigned long long)s->native_id,
               name[0] ? " " : "", name,
               s->on_cpu < 0 ? "state unknown" : s->on_cpu ? "active" : "idle",
               s->holds_gil ? ", holds the GIL" : "",
               s->torn ? " [stack changed while read: incomplete]" : "",
               s->truncated ? " [truncated]" : "");
        for (uint32_t k = 0; k < s->depth; k++) {
            const sonde_func *f = &p.funcs[s->frames[k].func];
            const char *file = sonde_profile_str(&p, f->file);
            printf("    %s (%s:%d)\n", sonde_profile_str(&p, f->qualname), file,
                   s->frames[k].line);
            print_source((int)pid, file, s->frames[k].line);
        }
        if (s->truncated)
            printf("    [truncated] ... the stack is deeper than %d frames: its outer frames "
                   "are not shown\n", SONDE_WALK_MAX_DEPTH);
    }
    rc = 0;
out:
    free(threads);
    if (w.profile)
        sonde_walker_close(&w);
    sonde_profile_free(&p);
    return rc;
}
